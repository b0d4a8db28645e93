#!/usr/bin/env bash
# The sanitizer matrix, one command:
#   build-san-tsan/  -Db_sanitize=thread            runs suite `tsan` (plain drivers;
#                                                   Criterion cannot run under TSan)
#   build-san-asan/  -Db_sanitize=address,undefined runs the default run (every suite but
#                                                   slow and tsan) but the spin models
#                                                   and the fuzz smokes
# Each builds only the targets its tests need (scripts/test_targets.py).
# usage: scripts/sanitize.sh [--smoke] [--build-only] [tsan|asan]...
#   --build-only  set up and build the stages' targets, run nothing
#                 (scripts/test.sh starts it beside the default run's tests)
#   --smoke  CI variant (the README's test command): DAGC_TEST_SCALE=0.1
#            and not the tests in suite `sanitize_full` (the golden graphs
#            run end to end, and under TSan the e2e graphs beyond one of
#            each family: tests/e2e/meson.build); a few minutes on 2 cores
# Both use clang (CC=clang unless CC is set): its TSan is the one we test with.
set -u
cd "$(dirname "$0")/.."
scripts/deps.sh sanitize || exit 2
scale=1.0
which=()
smoke=()
# The full matrix runs every test at full scale (DAGC_TEST_SCALE=1.0) two at
# a time: the heaviest graphs' checked frames take 2-4 minutes under TSan
# on 2 loaded cores (bench_frame_game_frame: 125 s alone at load 4, over
# its 300 s at load 9), so their timeouts double; the smoke keeps them.
timeouts=(--timeout-multiplier 2)
build_only=0
for a in "$@"; do
  case "$a" in
    --build-only) build_only=1 ;;
    --smoke) scale=0.1; smoke=(--no-suite sanitize_full); timeouts=() ;;
    tsan|asan) which+=("$a") ;;
    *) echo "usage: $0 [--smoke] [--build-only] [tsan|asan]..." >&2; exit 2 ;;
  esac
done
[ ${#which[@]} -eq 0 ] && which=(tsan asan)
export CC="${CC:-clang}"
export DAGC_TEST_SCALE="${DAGC_TEST_SCALE:-$scale}"
export TSAN_OPTIONS="${TSAN_OPTIONS:-halt_on_error=1 second_deadlock_stack=1}"
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1 abort_on_error=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-halt_on_error=1 print_stacktrace=1}"
status=0

setup() { # dir sanitize [meson options...]
  local d=$1 s=$2; shift 2
  # A folder is not yet a build (the asan stage unpacks the package cache
  # into DIR/vendor before its setup): meson-private says it is.
  if [ -d "$d/meson-private" ]; then
    meson setup --reconfigure "$d" -Db_sanitize="$s" -Db_lundef=false -Dbench_peers=disabled "$@" >/dev/null
  else
    meson setup "$d" -Db_sanitize="$s" -Db_lundef=false -Dbench_peers=disabled "$@" >/dev/null
  fi
}

# Builds in dir the targets of the tests that the meson test options
# select, and nothing else; then runs those tests.
build_and_test() { # dir meson-test-selection...
  local d=$1; shift
  local targets
  targets=$(python3 scripts/test_targets.py "$d" "$@") || return 2
  # shellcheck disable=SC2086 # one target a word
  nice ninja -C "$d" $targets >"$d/stage-build.log" 2>&1 || { tail -n 40 "$d/stage-build.log" >&2; return 2; }
  [ $build_only = 1 ] && return 0
  meson test -C "$d" --no-rebuild "$@" "${timeouts[@]}" --print-errorlogs --num-processes 2
}

for w in "${which[@]}"; do
  case "$w" in
    tsan)
      echo "== ThreadSanitizer (suite tsan, DAGC_TEST_SCALE=$DAGC_TEST_SCALE)"
      if setup build-san-tsan thread; then
        build_and_test build-san-tsan --suite tsan "${smoke[@]}"; rc=$?
      else rc=2; fi
      [ $rc = 2 ] && echo "sanitize.sh: tsan build failed" >&2
      [ $rc = 0 ] || status=1 ;;
    asan)
      echo "== AddressSanitizer + UBSan (default suites, DAGC_TEST_SCALE=$DAGC_TEST_SCALE)"
      # Not suite tsan (the plain hosts of what Criterion runs here), nor
      # the spin models: spin and its pan are tools built with the plain
      # compiler, no project code runs there (the default run checks them;
      # under ASan they took 305 of the stage's 523 test-s).
      # With the libFuzzer targets (-Dfuzz=true: dagc's code gets
      # -fsanitize=fuzzer-no-link, coverage counters): their 10-second
      # smokes run here too, in the build the stage makes anyway
      # (docs/testing.md, "Fuzzing"). DAGC_SKIP_FUZZ=1 leaves them out.
      fuzz=true
      [ "${DAGC_SKIP_FUZZ:-0}" = 1 ] && fuzz=false
      # The Tracy end-to-end test runs here too (our adapter and libdagrt
      # under ASan+UBSan, Tracy's client as vendor code without): its
      # options from scripts/middleware.sh (the tools from the middleware
      # cache), not Box2D's or Jolt's, whose tests the default run has.
      # shellcheck disable=SC2046 # one option a word
      if setup build-san-asan address,undefined -Dfuzz=$fuzz \
           $(scripts/middleware.sh build-san-asan/vendor 2>/dev/null | grep -E '^-D(tracy_src|tracy_tools|middleware_cache)='); then
        build_and_test build-san-asan --no-suite slow --no-suite tsan --no-suite models "${smoke[@]}"; rc=$?
        # Tracy's client as this stage compiled it, for the next run.
        scripts/middleware.sh --store build-san-asan >/dev/null 2>&1 || true
      else rc=2; fi
      [ $rc = 2 ] && echo "sanitize.sh: asan build failed" >&2
      [ $rc = 0 ] || status=1 ;;
  esac
done
exit $status
