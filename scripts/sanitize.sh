#!/usr/bin/env bash
# The sanitizer matrix, one command:
#   build-san-tsan/  -Db_sanitize=thread            runs suite `tsan` (plain drivers;
#                                                   Criterion cannot run under TSan)
#   build-san-asan/  -Db_sanitize=address,undefined runs every default suite (--no-suite slow) but the spin models
# usage: scripts/sanitize.sh [--smoke] [tsan|asan]...
#   --smoke  CI variant: DAGC_TEST_SCALE=0.1 (a few minutes on 2 cores)
# Both use clang (CC=clang unless CC is set): its TSan is the one we test with.
set -u
cd "$(dirname "$0")/.."
scripts/deps.sh sanitize || exit 2
scale=1.0
which=()
for a in "$@"; do
  case "$a" in
    --smoke) scale=0.1 ;;
    tsan|asan) which+=("$a") ;;
    *) echo "usage: $0 [--smoke] [tsan|asan]..." >&2; exit 2 ;;
  esac
done
[ ${#which[@]} -eq 0 ] && which=(tsan asan)
export CC="${CC:-clang}"
export DAGC_TEST_SCALE="${DAGC_TEST_SCALE:-$scale}"
export TSAN_OPTIONS="${TSAN_OPTIONS:-halt_on_error=1 second_deadlock_stack=1}"
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1 abort_on_error=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-halt_on_error=1 print_stacktrace=1}"
status=0

setup() { # dir sanitize
  local d=$1 s=$2
  if [ -d "$d" ]; then
    meson setup --reconfigure "$d" -Db_sanitize="$s" -Db_lundef=false -Dbench_peers=disabled >/dev/null
  else
    meson setup "$d" -Db_sanitize="$s" -Db_lundef=false -Dbench_peers=disabled >/dev/null
  fi
}

for w in "${which[@]}"; do
  case "$w" in
    tsan)
      echo "== ThreadSanitizer (suite tsan, DAGC_TEST_SCALE=$DAGC_TEST_SCALE)"
      if setup build-san-tsan thread && nice meson compile -C build-san-tsan >/dev/null; then
        meson test -C build-san-tsan --suite tsan --print-errorlogs --num-processes 2 || status=1
      else
        echo "sanitize.sh: tsan build failed" >&2; status=1
      fi ;;
    asan)
      echo "== AddressSanitizer + UBSan (default suites, DAGC_TEST_SCALE=$DAGC_TEST_SCALE)"
      if setup build-san-asan address,undefined && nice meson compile -C build-san-asan >/dev/null; then
        # Not the spin models: spin and its pan are tools built with the
        # plain compiler, no project code runs there (the default run
        # checks them; under ASan they took 305 of the stage's 523 test-s).
        meson test -C build-san-asan --no-suite slow --no-suite models --print-errorlogs --num-processes 2 || status=1
      else
        echo "sanitize.sh: asan build failed" >&2; status=1
      fi ;;
  esac
done
exit $status
