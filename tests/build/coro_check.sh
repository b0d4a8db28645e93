#!/bin/sh
# dagrt_coro.hpp (runtime/include/, C++20 coroutines) with g++ and clang++:
# refused with its own message in a C++17 translation unit (a compile that
# must fail); compiled as C++20 with and without exceptions under -Wall
# -Wextra -Wpedantic -Werror, the scenarios of tests/cxx/coro_scenarios.cpp
# in each (clang++'s with exceptions run by the plain driver at a tenth of
# their scale: g++'s is the default build's own); then,
# with exceptions, one escaping a spawned coroutine, or a started one whose
# handle goes without a get, must end the program with dagrt.hpp's message.
# usage: coro_check.sh SOURCE_DIR LIBDAGRT_A SCRATCH_DIR
set -eu
src=$1 lib=$2 scratch=$3 dagc=$4
syslibs=${DAGRT_STATIC_LINK:-}
fail() { echo "FAIL: $*"; exit 1; }
cxxs=
for c in g++ clang++; do command -v $c >/dev/null && cxxs="$cxxs $c"; done
[ -n "$cxxs" ] || { echo "SKIP: neither g++ nor clang++ is installed"; exit 77; }
for c in g++ clang++; do case " $cxxs " in *" $c "*) ;; *) echo "note: $c is not installed" ;; esac; done
cc=$(command -v gcc || command -v clang || command -v cc)
inc=$src/runtime/include
scn=$src/tests/scenario
warn="-Wall -Wextra -Wpedantic -Werror"
rm -rf "$scratch"
mkdir -p "$scratch"

# Below C++20: the header's #error, nothing else.
printf '#include "dagrt_coro.hpp"\nint main() { return 0; }\n' >"$scratch/cxx17.cpp"
for cxx in $cxxs; do
    if $cxx -std=c++17 -fsyntax-only -I"$inc" "$scratch/cxx17.cpp" >"$scratch/out" 2>&1; then
        fail "$cxx -std=c++17 compiled dagrt_coro.hpp"
    fi
    grep -qF "dagrt_coro.hpp needs C++20 coroutines" "$scratch/out" ||
        { cat "$scratch/out"; fail "$cxx -std=c++17: not the header's message"; }
done

$cc -std=c11 -O1 -I"$scn" -c "$scn/driver.c" -o "$scratch/driver.o" || fail "driver.c"
$cc -std=c11 -O1 -I"$scn" -c "$scn/scenario.c" -o "$scratch/scenario.o" || fail "scenario.c"
# The scenarios' graphs (coro_graph.dag, coro_node.dag) through dagc --cxx.
"$dagc" --cxx "$src/tests/cxx/coro_graph.dag" --c "$scratch/cg_gen.cpp" --h "$scratch/cg_gen.h" || fail "dagc coro_graph.dag"
"$dagc" --cxx "$src/tests/cxx/coro_node.dag" --c "$scratch/cn_gen.cpp" --h "$scratch/cn_gen.h" || fail "dagc coro_node.dag"
scn_src="$src/tests/cxx/coro_scenarios.cpp $src/tests/cxx/coro_graph.cpp $src/tests/cxx/coro_node.cpp $scratch/cg_gen.cpp $scratch/cn_gen.cpp"
# The scenarios: the default build runs them as g++ compiles them (the
# test `coro`); here the other compiler's build runs them, and the builds
# without exceptions are compiled (-fsyntax-only: their warnings and
# errors), to keep this test's time small.
# DAGC_MATRIX=smoke (the default run): clang++ with exceptions and g++
# without, both -fsyntax-only (g++ with them is the default build's own
# `coro`, which runs); full (suite slow): clang++'s build runs its
# scenarios, and clang++ without exceptions and g++ with them are compiled
# too. The escaping exception: g++ in smoke, every compiler in full.
n=0
for cxx in $cxxs; do
    for exc in -fexceptions -fno-exceptions; do
        what="$cxx -std=c++20 $exc"
        if [ "${DAGC_MATRIX:-full}" = smoke ] && [ "$cxxs" != " g++" ] &&
           { [ "$cxx" = g++ ] && [ "$exc" = -fexceptions ] || [ "$cxx" = clang++ ] && [ "$exc" = -fno-exceptions ]; }; then
            continue
        fi
        if [ "${DAGC_MATRIX:-full}" != smoke ] &&
           { [ "$cxx" = clang++ ] && [ "$exc" = -fexceptions ] || [ "$cxxs" = " g++" ] && [ "$exc" = -fexceptions ]; }; then
            objs=
            for f in $scn_src; do
                o="$scratch/$(basename "$f" .cpp).o"
                $cxx -std=c++20 $exc -O1 $warn -I"$inc" -I"$scn" -I"$src/tests/cxx" -I"$scratch" \
                    -c "$f" -o "$o" || fail "$(basename "$f") with $what"
                objs="$objs $o"
            done
            $cxx $objs "$scratch/driver.o" "$scratch/scenario.o" "$lib" $syslibs -pthread \
                -o "$scratch/coro_drv" || fail "link with $what"
            DAGC_TEST_SCALE=0.1 "$scratch/coro_drv" >"$scratch/out" 2>&1 ||
                { cat "$scratch/out"; fail "the scenarios built with $what"; }
        else
            for f in $scn_src; do
                $cxx -std=c++20 $exc -fsyntax-only $warn -I"$inc" -I"$scn" -I"$src/tests/cxx" -I"$scratch" \
                    "$f" || fail "$(basename "$f") with $what"
            done
        fi
        n=$((n + 1))
    done
done

# An exception escaping a spawned coroutine: the message, then std::terminate.
cat >"$scratch/throw.cpp" <<'CPP'
#include "dagrt_coro.hpp"
#include <cstdio>
#include <stdexcept>
static dagrtpp::task<> boom(dagrt *rt)
{
    (void)co_await dagrtpp::co::sleep_for(rt, std::chrono::milliseconds(1));
    if (rt)
        throw std::runtime_error("boom in a coroutine");
}
int main(int argc, char **)
{
    dagrtpp::runtime rt;
    if (argc > 1) {   /* started, ended, its handle dropped without get */
        auto s = dagrtpp::start(rt, boom(rt));
        (void)s.wait(rt);
    } else {
        (void)dagrtpp::spawn(rt, boom(rt));
        (void)dagrtpp::sleep_for(rt, std::chrono::seconds(2));
    }
    std::puts("not reached");
    return 0;
}
CPP
throw_cxxs=$cxxs
[ "${DAGC_MATRIX:-full}" = smoke ] && [ -n "${cxxs%% clang++}" ] && throw_cxxs=${cxxs%% clang++}
for cxx in $throw_cxxs; do
    $cxx -std=c++20 $warn -I"$inc" "$scratch/throw.cpp" "$lib" $syslibs -pthread -o "$scratch/throw" ||
        fail "throw.cpp with $cxx"
    for mode in "" dropped; do
        set +e
        "$scratch/throw" $mode >"$scratch/out" 2>&1
        rc=$?
        set -e
        [ $rc -gt 128 ] || { cat "$scratch/out"; fail "throw $mode ($cxx): exit status $rc, not a signal"; }
        grep -qF "dagrt.hpp: an exception escaped a task (boom in a coroutine)" "$scratch/out" ||
            { cat "$scratch/out"; fail "throw $mode ($cxx): no message"; }
        if grep -q "not reached" "$scratch/out"; then fail "throw $mode ($cxx): the program went on"; fi
    done
done
echo "ok: dagrt_coro.hpp refused below C++20, its scenarios compiled in $n builds ($cxxs; with and without exceptions), an escaping exception ends the program"
