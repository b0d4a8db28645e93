#!/usr/bin/env bash
# Windows x64: cross-build with MinGW-w64 and run the Windows suite under Wine.
#
#   scripts/windows.sh             full: installs the toolchain and Wine when
#                                  missing, Meson cross build in build-win/
#                                  (scripts/cross/mingw-w64-x86_64.txt) of
#                                  libdagrt, dagc.exe and the plain test
#                                  drivers, then under Wine: `meson test` (the
#                                  runtime and fiber scenarios, the Win64 fiber
#                                  tests, the I/O scenarios on the completion
#                                  port and on the blocking lane, the
#                                  end-to-end graphs with their checkers, the
#                                  example frame), the I/O scenarios once more
#                                  with DAGRT_IO=fallback (the switch from the
#                                  environment), and the
#                                  compiler's golden runner over dagc.exe
#                                  (tests/compiler/golden.c, built natively).
#   scripts/windows.sh --consumer DIR  only the package consumer test
#                                  (win_consumer below) on a lean cross
#                                  build in DIR/cross.
#   scripts/windows.sh --smoke DIR short (CI, scripts/test.sh): the same
#                                  Meson cross build in DIR/cross, only the
#                                  fiber and I/O drivers' targets, and a
#                                  handful of their scenarios under Wine.
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
consumer=
if [ "${1:-}" = --smoke ]; then
  smoke=${2:?usage: $0 --smoke OUTDIR}
  shift 2
elif [ "${1:-}" = --consumer ]; then
  consumer=${2:?usage: $0 --consumer OUTDIR}
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

# The package consumer (docs/windows.md, "A CMake project cross-built for
# Windows"): CROSS_BUILD's `meson install --destdir` tree is the package a
# CMake project finds; the MinGW CMake toolchain (scripts/cross/) builds
# tests/build/windows/ (a C++ engine: engine.dag + main.cpp) against it with
# a dagc for this machine, once with the static library (DAGC_EXECUTABLE
# names the host dagc) and once with the DLL (the host dagc found on PATH),
# and runs both under Wine. Checks: the shared build imports libdagrt's DLL,
# copied beside it through TARGET_RUNTIME_DLLS (so the package's target is
# the DLL from bin/), the static one does not (and links, WaitOnAddress's
# library coming from the package); with no host dagc the configure step
# fails saying what to set. The host dagc is $DAGC_HOST, or one built here
# in WORK/host (only its target). Adds to the globals passed and failed.
# usage: win_consumer CROSS_BUILD WORK
win_consumer() {
  local cb=$1 w=$2 cfg host kind log
  local tc=$PWD/scripts/cross/mingw-w64-x86_64.cmake proj=$PWD/tests/build/windows
  case $w in /*) ;; *) w=$PWD/$w ;; esac
  command -v cmake >/dev/null || { echo "windows consumer: cmake missing" >&2; failed=$((failed + 1)); return; }
  rm -rf "$w/root" "$w/static" "$w/shared" "$w/nodagc"
  mkdir -p "$w"
  if ! meson install -C "$cb" --no-rebuild --quiet --destdir "$w/root" >"$w/install.log" 2>&1; then
    tail -n 20 "$w/install.log" >&2
    echo "windows consumer: meson install of $cb failed" >&2
    failed=$((failed + 1)); return
  fi
  cfg=$(dirname "$(find "$w/root" -name dagrtConfig.cmake | head -n 1)")
  host=${DAGC_HOST:-}
  if [ -z "$host" ]; then
    host=$w/host/dagc/dagc
    if ! { [ -f "$w/host/build.ninja" ] ||
           meson setup "$w/host" -Dtests=disabled -Dbenchmarks=disabled >"$w/host-setup.log" 2>&1; } ||
       ! meson compile -C "$w/host" dagc/dagc >"$w/host-build.log" 2>&1; then
      tail -n 20 "$w"/host-*.log >&2
      echo "windows consumer: the host dagc did not build" >&2
      failed=$((failed + 1)); return
    fi
  fi
  for kind in static shared nodagc; do
    local args=(-S "$proj" -B "$w/$kind" -G Ninja -DCMAKE_TOOLCHAIN_FILE="$tc" -Ddagrt_DIR="$cfg")
    local path=$PATH
    case $kind in
      static) args+=(-DDAGRT_STATIC=ON -DDAGC_EXECUTABLE="$host") ;;
      shared) path=$(dirname "$host"):$PATH ;;
    esac
    log=$w/$kind.log
    if [ $kind = nodagc ]; then
      # No dagc on PATH but the cross tools: configuring must stop and say
      # that a host dagc is needed (the package's dagc.exe is not one).
      if [ -e /usr/bin/dagc ] || [ -e /bin/dagc ]; then continue; fi   # installed: it would be found
      PATH=/usr/bin:/bin cmake "${args[@]}" >"$log" 2>&1 || true
      # (CMake wraps the message: compare with the whitespace squeezed.)
      if tr -s ' \n' '  ' <"$log" | grep -q "cross-compiling: the package's dagc ([^)]*dagc.exe) is for the target machine and no dagc was found on this one's PATH; set DAGC_EXECUTABLE" &&
         [ ! -f "$w/$kind/build.ninja" ]; then
        passed=$((passed + 1))
      else
        tail -n 20 "$log" >&2
        echo "windows consumer: without a host dagc the configure step did not fail as documented" >&2
        failed=$((failed + 1))
      fi
      continue
    fi
    if ! PATH=$path cmake "${args[@]}" >"$log" 2>&1 || ! cmake --build "$w/$kind" >>"$log" 2>&1; then
      tail -n 30 "$log" >&2
      echo "windows consumer: the $kind build failed" >&2
      failed=$((failed + 1)); continue
    fi
    local exe=$w/$kind/engine.exe imports ok=1
    imports=$(x86_64-w64-mingw32-objdump -p "$exe" | sed -n 's/^[[:space:]]*DLL Name: //p')
    grep -q "dagc: $host\$" "$log" || { echo "windows consumer: $kind: dagc_add_graph did not run $host" >&2; ok=0; }
    if [ $kind = shared ]; then
      echo "$imports" | grep -q "^libdagrt" || { echo "windows consumer: the shared build does not import libdagrt's DLL" >&2; ok=0; }
      ls "$w/$kind"/libdagrt*.dll >/dev/null 2>&1 || { echo "windows consumer: the DLL was not copied beside engine.exe" >&2; ok=0; }
    elif echo "$imports" | grep -q "^libdagrt"; then
      echo "windows consumer: the static build imports libdagrt's DLL" >&2; ok=0
    fi
    if [ $ok = 1 ] && timeout 120 "$WINE" "$exe" >"$w/$kind.run" 2>&1 </dev/null &&
       grep -q "engine: rc 0, frames 5, drawn 5000" "$w/$kind.run"; then
      passed=$((passed + 1))
    else
      [ $ok = 0 ] || { cat "$w/$kind.run" >&2; echo "windows consumer: the $kind engine.exe failed under Wine" >&2; }
      failed=$((failed + 1))
    fi
  done
}

if [ -n "$consumer" ]; then
  # A lean cross build (what a package build is: no test drivers).
  cb=$consumer/cross
  mkdir -p "$consumer"
  if { [ -f "$cb/build.ninja" ] ||
       meson setup "$cb" -Dtests=disabled -Dbench_peers=disabled \
         --cross-file scripts/cross/mingw-w64-x86_64.txt >"$consumer/setup.log" 2>&1; } &&
     meson compile -C "$cb" >"$consumer/compile.log" 2>&1; then
    start_wine "$consumer"
    passed=0 failed=0
    win_consumer "$cb" "$consumer/consumer"
  else
    tail -n 30 "$consumer"/*.log >&2
    echo "windows: cross build failed" >&2
    passed=0 failed=1
  fi
  echo "$passed passed, $failed failed"
  [ $failed = 0 ]
  exit $?
fi

if [ -n "$smoke" ]; then
  # The Meson cross build of B below, reduced to the fiber driver's target
  # (libdagrt, the fiber scenarios and the scenario runner).
  sb=$smoke/cross
  mkdir -p "$smoke"
  ok=1
  if [ ! -f "$sb/build.ninja" ]; then
    meson setup "$sb" -Dtests=auto -Dbench_peers=disabled \
      --cross-file scripts/cross/mingw-w64-x86_64.txt >"$smoke/setup.log" 2>&1 || ok=0
  else
    # A directory set up with -Dtests=disabled has no test drivers now.
    meson configure "$sb" -Dtests=auto >"$smoke/setup.log" 2>&1 || ok=0
  fi
  if [ $ok = 1 ] && ! meson compile -C "$sb" tests/fiber/fiber_drv tests/wait/wait_drv >"$smoke/compile.log" 2>&1; then
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
  # The I/O calls: files in a temporary directory and sockets on
  # 127.0.0.1, on the completion port and on the blocking lane (_fb), and
  # the I/O waits in the trace.
  for s in io_file_basic io_tcp io_udp_fb io_scope_cancel io_destroy_reads_fb io_trace; do
    if timeout 120 "$WINE" "$sb/tests/wait/wait_drv.exe" "$s"; then
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
# The compiler's one golden runner (tests/compiler/golden.c), built for
# this machine by the same cross build, over dagc.exe under Wine: the paths
# dagc is given spelled as Windows paths, its windows/ tests included; a
# run that Wine itself hangs (timeout's 124) or crashes is repeated once.
golden_out=$(DAGC=$PWD/$B/dagc/dagc.exe GOLDEN_PATHS=windows \
  DAGC_WRAPPER="$(command -v timeout) 60 $(command -v "$WINE")" \
  GOLDEN_DIR=$PWD/tests/compiler/golden GOLDEN_C_DIR=$PWD/tests/compiler/golden_c \
  DOT=$(command -v dot) "$B/tests/compiler/test_golden" --jobs 1 2>&1)
rc=$?
echo "$golden_out" >&2   # Criterion names only the failures, then its synthesis
[ $rc = 0 ] || status=1
# Criterion's synthesis line as "N passed, N failed" for summarize.py.
golden_sum=$(echo "$golden_out" | sed -n 's/.*Tested: \([0-9]*\) | Passing: \([0-9]*\) .*/\1 \2/p' |
  tail -n 1 | { read -r t p && echo "$p passed, $((t - p)) failed"; })
# The I/O scenarios (every io_ entry but the POSIX ones) once more with the lane forced
# from the environment (DAGRT_IO=fallback; `meson test` above forced it
# through dagrt_config for the _fb ones): the switch a user has.
io_pass=0 io_fail=0
for s in $(sed -n '/SCN_POSIX/d; s/^SCENARIO(io, \(io_[a-z_]*\), .*/\1/p' tests/wait/wait_list.h | grep -v '_fb$'); do
  if DAGRT_IO=fallback timeout 120 "$WINE" "$B/tests/wait/wait_drv.exe" "$s" >"$B/io-fallback-$s.log" 2>&1 </dev/null; then
    io_pass=$((io_pass + 1))
  else
    cat "$B/io-fallback-$s.log" >&2
    echo "windows: $s with DAGRT_IO=fallback FAILED" >&2
    io_fail=$((io_fail + 1))
  fi
done
[ $io_fail = 0 ] || status=1
passed=0 failed=0
win_consumer "$B" "$B/consumer"
[ $failed = 0 ] || status=1
python3 scripts/summarize.py "$B/meson-logs/testlog.json" \
  --add "$golden_sum" --add "$io_pass passed, $io_fail failed" --add "$passed passed, $failed failed" || status=1
exit $status
