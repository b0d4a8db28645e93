#!/usr/bin/env bash
# The README's test command: installs what is missing, builds everything and
# runs the whole default test suite (every suite but `slow`), then a short
# sanitizer smoke (ThreadSanitizer; ASan+UBSan with the fuzz smokes) and the
# Windows smoke under Wine (scripts/windows.sh --smoke). Ends with "N passed, N failed".
set -u
cd "$(dirname "$0")/.."
scripts/deps.sh test || exit 2
logs=()
status=0

B=build-test
# The middleware snapshots (../shared/packagecache, when there) unpacked
# into the build directory, sha256 checked: the Box2D and Jolt integration
# tests. Their vendor code comes prebuilt from the middleware cache when a
# run before compiled it with the same snapshots, compilers and build files
# (scripts/middleware.sh: ${XDG_CACHE_HOME:-~/.cache}/dagrt/middleware/KEY);
# our adapters and the tests are compiled and run every time.
mw_opts=$(scripts/middleware.sh "$B/vendor") || status=1
# The C++ benchmarks that no test here runs are not built (bench/meson.build,
# bench_untested: the slow suite builds and runs them).
opts="$mw_opts -Dbench_untested=false"
if [ -d "$B/meson-private" ]; then meson setup --reconfigure "$B" $opts >/dev/null || status=1
else meson setup "$B" $opts >/dev/null || status=1; fi
# The default run: every suite but slow and tsan (the plain hosts of the
# scenarios Criterion runs here; the TSan stage below runs them).
sanitize=0
[ -x scripts/sanitize.sh ] && [ "${DAGC_SKIP_SANITIZE:-0}" != 1 ] && sanitize=1
if [ $status -eq 0 ] && meson compile -C "$B"; then
  scripts/middleware.sh --store "$B" || echo "test.sh: the middleware cache was not written (the run goes on)" >&2
  # The sanitizer stages' builds start now, at the lowest priority, beside
  # the default run's tests, which leave about a third of the two cores
  # idle (timers, waits, one-threaded checks: 555 CPU-seconds in a 744 s
  # run here). A failure there shows again in the stage below, which
  # builds what is left and says why.
  prebuild=
  if [ $sanitize = 1 ]; then
    nice -n 19 scripts/sanitize.sh --smoke --build-only >"$B/sanitize-prebuild.log" 2>&1 &
    prebuild=$!
  fi
  meson test -C "$B" --no-suite slow --no-suite tsan --print-errorlogs --num-processes 2 || status=1
  logs+=("$B/meson-logs/testlog.json")
  [ -n "$prebuild" ] && { wait "$prebuild" || true; }
else
  echo "test.sh: build failed" >&2; status=1
fi

if [ $sanitize = 1 ]; then
  scripts/sanitize.sh --smoke || status=1
  for f in build-san-tsan/meson-logs/testlog.json build-san-asan/meson-logs/testlog.json; do
    [ -f "$f" ] && logs+=("$f")
  done
fi

# Windows x64: the cross-built runtime and fiber driver under Wine, a
# handful of scenarios (scripts/windows.sh; the full run is its default, and
# `windows_full` in the slow suite). Its "N passed, N failed" joins the sum.
extra=()
win_out=$(scripts/windows.sh --smoke "$B/windows-smoke" 2>&1)
win_rc=$?
echo "$win_out" | tail -n 20
[ $win_rc -eq 0 ] || status=1
extra+=(--add "$(echo "$win_out" | tail -n 1)")

if [ ${#logs[@]} -gt 0 ]; then
  python3 scripts/summarize.py "${logs[@]}" "${extra[@]}" || status=1
else
  echo "0 passed, 1 failed"
fi
exit $status
