#!/usr/bin/env bash
# Windows x64: cross-build with MinGW-w64 and run the Windows suite under Wine.
#
#   scripts/windows.sh             full: installs the toolchain and Wine when
#                                  missing, Meson cross build in build-win/
#                                  (scripts/cross/mingw-w64-x86_64.txt) of
#                                  libdagrt, dagc.exe and the plain test
#                                  drivers, then under Wine: `meson test` (the
#                                  runtime and fiber scenarios, the Win64 fiber
#                                  tests, the end-to-end graphs with their
#                                  checkers, the example frame) and the
#                                  compiler's golden tests with dagc.exe
#                                  (tests/compiler/golden_wine.py).
#   scripts/windows.sh --smoke DIR short (CI, scripts/test.sh): compiles the
#                                  runtime and the fiber driver straight with
#                                  the cross compiler into DIR and runs a
#                                  handful of scenarios under Wine.
# Both end with "N passed, N failed". Wine's prefix is made under the build
# directory on first use (about a minute); WINEDEBUG=-all keeps it quiet.
# Criterion is Linux-only here, so the Windows tests are the plain drivers
# (the same scenario functions the Criterion tests call).
set -u
cd "$(dirname "$0")/.."
CC=${MINGW_CC:-x86_64-w64-mingw32-gcc-posix}
WINE=${WINE:-wine}

smoke=
if [ "${1:-}" = --smoke ]; then
  smoke=${2:?usage: $0 --smoke OUTDIR}
  shift 2
fi

# The toolchain and Wine (the `test` list of scripts/deps.sh has them too).
need=(gcc-mingw-w64-x86-64 g++-mingw-w64-x86-64 wine wine64)
missing=()
for p in "${need[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ]; then
    echo "windows: installing ${missing[*]}" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >/dev/null || true
    apt-get install -y -qq "${missing[@]}" >/dev/null || apt-get install -y "${missing[@]}"
  else
    echo "windows: missing Debian packages; run as root: apt-get install -y ${missing[*]}" >&2
  fi
fi
for t in "$CC" "$WINE" wineserver; do
  if ! command -v "$t" >/dev/null; then
    echo "windows: $t missing after the install step" >&2
    echo "0 passed, 1 failed"
    exit 1
  fi
done

# One Wine prefix per build directory; a persistent wineserver for the run
# (each program start is then about half a second, not several).
start_wine() {
  local d=$1
  case $d in /*) ;; *) d=$PWD/$d ;; esac
  export WINEPREFIX=${DAGC_WINEPREFIX:-$d/wineprefix}
  export WINEDEBUG=-all WINEDLLOVERRIDES="mscoree,mshtml=" DISPLAY=
  mkdir -p "$WINEPREFIX"
  wineserver -p >/dev/null 2>&1 </dev/null || true
  if [ ! -f "$WINEPREFIX/system.reg" ]; then
    echo "windows: making the Wine prefix $WINEPREFIX" >&2
  fi
  # Also a warm-up: the first program of a fresh wineserver now and then
  # hangs while Wine starts its own services; that one is not a test.
  timeout 180 "$WINE" cmd /c exit >/dev/null 2>&1 </dev/null || true
}
stop_wine() { wineserver -k >/dev/null 2>&1 || true; }
trap stop_wine EXIT

if [ -n "$smoke" ]; then
  mkdir -p "$smoke"
  cflags=(-std=c11 -O2 -g -Wall -Wextra -Wpedantic -DDAGRT_CTX_X86_64_WIN64
          -Iruntime -Iruntime/include -Itests/fiber -Itests/scenario)
  objs=()
  ok=1
  for src in runtime/*.c runtime/os/os_once.c runtime/os/os_win32.c runtime/arch/ctx_make.c \
             runtime/arch/switch_x86_64_win64.S tests/fiber/fiber_scenarios.c \
             tests/fiber/sync_scenarios.c tests/fiber/win64_scenarios.c \
             tests/fiber/regs_x86_64_win64.S tests/fiber/fiber_table.c \
             tests/scenario/scenario.c tests/scenario/driver.c; do
    o="$smoke/$(echo "$src" | tr / _).o"
    "$CC" "${cflags[@]}" -c "$src" -o "$o" || ok=0
    objs+=("$o")
  done
  if [ $ok = 1 ]; then
    "$CC" -static -o "$smoke/fiber_drv.exe" "${objs[@]}" -lsynchronization -pthread || ok=0
  fi
  if [ $ok = 0 ]; then
    echo "windows: cross build failed" >&2
    echo "0 passed, 1 failed"
    exit 1
  fi
  start_wine "$smoke"
  passed=0 failed=0
  # The Win64 switch (registers, TIB bounds, unwinding, the guard page),
  # FP state, ping-pong and the runtime's fiber waits.
  for s in regs tib unwind guard fp pingpong mutex events_2_workers; do
    if DAGC_TEST_SCALE=${DAGC_TEST_SCALE:-0.05} timeout 300 "$WINE" "$smoke/fiber_drv.exe" "$s"; then
      passed=$((passed + 1))
    else
      echo "windows smoke: $s FAILED" >&2
      failed=$((failed + 1))
    fi
  done
  echo "$passed passed, $failed failed"
  [ $failed = 0 ]
  exit $?
fi

B=build-win
opts=(-Dtests=disabled -Dbench_peers=disabled --cross-file scripts/cross/mingw-w64-x86_64.txt)
if [ -d "$B" ]; then meson setup --reconfigure "$B" "${opts[@]}" >/dev/null
else meson setup "$B" "${opts[@]}" >/dev/null; fi || { echo "0 passed, 1 failed"; exit 1; }
start_wine "$B"
if ! meson compile -C "$B"; then
  echo "windows: cross build failed" >&2
  echo "0 passed, 1 failed"
  exit 1
fi
status=0
meson test -C "$B" --print-errorlogs --num-processes "${DAGC_WIN_JOBS:-2}" "$@" || status=1
golden_out=$(python3 tests/compiler/golden_wine.py --dagc "$B/dagc/dagc.exe" --wine "$WINE")
rc=$?
echo "$golden_out" | grep -v '^ok ' >&2
[ $rc = 0 ] || status=1
python3 scripts/summarize.py "$B/meson-logs/testlog.json" \
  --add "$(echo "$golden_out" | tail -n 1)" || status=1
exit $status
