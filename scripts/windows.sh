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
#   scripts/windows.sh --smoke DIR short (CI, scripts/test.sh): the same
#                                  Meson cross build in DIR/cross, only the
#                                  fiber driver's target, and a handful of
#                                  its scenarios under Wine.
# Both end with "N passed, N failed"; the packages come from scripts/deps.sh
# (group test). Wine's prefix is made under the build
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

# The toolchain and Wine: the `test` group of scripts/deps.sh. What it
# cannot install (not root) it names; the check below decides.
scripts/deps.sh test || echo "windows: scripts/deps.sh test did not install everything" >&2
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
  # The Meson cross build of B below, reduced to the fiber driver's target
  # (libdagrt, the fiber scenarios and the scenario runner).
  sb=$smoke/cross
  mkdir -p "$smoke"
  ok=1
  if [ ! -f "$sb/build.ninja" ]; then
    meson setup "$sb" -Dtests=auto -Dbench_peers=disabled \
      --cross-file scripts/cross/mingw-w64-x86_64.txt >"$smoke/setup.log" 2>&1 || ok=0
  fi
  if [ $ok = 1 ] && ! meson compile -C "$sb" tests/fiber/fiber_drv >"$smoke/compile.log" 2>&1; then
    ok=0
  fi
  if [ $ok = 0 ]; then
    tail -n 30 "$smoke"/*.log >&2
    echo "windows: cross build failed" >&2
    echo "0 passed, 1 failed"
    exit 1
  fi
  start_wine "$smoke"
  passed=0 failed=0
  # The Win64 switch (registers, TIB bounds, unwinding, the guard page),
  # FP state, ping-pong and the runtime's fiber waits.
  for s in regs tib unwind guard fp pingpong mutex events_2_workers; do
    if DAGC_TEST_SCALE=${DAGC_TEST_SCALE:-0.05} timeout 300 "$WINE" "$sb/tests/fiber/fiber_drv.exe" "$s"; then
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
opts=(-Dtests=auto -Dbench_peers=disabled --cross-file scripts/cross/mingw-w64-x86_64.txt)
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
