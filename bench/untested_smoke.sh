#!/bin/sh
# The benchmarks no default test runs (bench/meson.build, bench_untested),
# built and run at a token size: each must exit 0 (its own checks of what
# it computed included). A benchmark this build did not configure (no
# oneTBB, no Box2D or Jolt snapshot) is named and skipped.
# usage: untested_smoke.sh BUILD_DIR SOURCE_DIR [TARGET_PATH...]
# (the targets are built here first: they are no test's dependency, which
# would put them back into the default build)
set -u
b=$1 src=$2
shift 2
fail=0 ran=0
if [ $# -gt 0 ]; then
    rel=
    for p in "$@"; do rel="$rel ${p#"$b"/}"; done
    # shellcheck disable=SC2086 # one target a word
    ninja -C "$b" $rel >"$b/untested-build.log" 2>&1 ||
        { tail -n 40 "$b/untested-build.log"; echo "FAIL: building$rel"; exit 1; }
fi
run() { # name path args...
    n=$1 exe=$2; shift 2
    if [ ! -x "$exe" ]; then echo "skip: $n (not configured in this build)"; return; fi
    if "$exe" "$@" >"$b/untested-$n.log" 2>&1; then
        echo "ok: $n"; ran=$((ran + 1))
    else
        echo "FAIL: $n $* (exit $?)"; tail -n 20 "$b/untested-$n.log"; fail=1
    fi
}
run bench_batch "$b/bench/runtime/bench_batch" --quick
run bench_hpp "$b/bench/runtime/bench_hpp" 2000 3 1
run bench_coro "$b/bench/runtime/bench_coro" 2000 1 0 200
run bench_rt_tbb "$b/bench/runtime/bench_rt_tbb" --quick
run bench_box2d "$b/bench/middleware/bench_box2d" --rounds 1 --steps 0.01
if [ -x "$b/bench/middleware/jolt_perf_jolt" ]; then
    run jolt_perf "$src/bench/middleware/jolt_perf.sh" "$b" 1 20
else
    echo "skip: jolt_perf (not configured in this build)"
fi
echo "$ran ran"
exit $fail
