#!/bin/sh
# dagrt.hpp (runtime/include/) compiled with g++ and clang++, as C++17 and
# C++20, with and without exceptions, under -Wall -Wextra -Wpedantic
# -Werror: the scenarios of tests/cxx (cxx_scenarios.cpp) in each build,
# run by the plain driver at a tenth of their scale; then, with
# exceptions, a task's escaping exception (and a group destroyed while it
# counts a task) must end the program with dagrt.hpp's message.
# usage: hpp_check.sh SOURCE_DIR LIBDAGRT_A SCRATCH_DIR
set -eu
src=$1 lib=$2 scratch=$3
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

# The plain driver, C, once.
$cc -std=c11 -O1 -I"$scn" -c "$scn/driver.c" -o "$scratch/driver.o" || fail "driver.c"
$cc -std=c11 -O1 -I"$scn" -c "$scn/scenario.c" -o "$scratch/scenario.o" || fail "scenario.c"

n=0
# DAGC_MATRIX=smoke (the default run): two of the builds, one per
# compiler, between them both standards and both exception modes; the
# whole matrix in suite slow (test hpp_full).
for cxx in $cxxs; do
    for std in c++17 c++20; do
        for exc in -fexceptions -fno-exceptions; do
            if [ "${DAGC_MATRIX:-full}" = smoke ]; then
                case "$cxx $std $exc" in
                    "g++ c++17 -fno-exceptions"|"clang++ c++20 -fexceptions") ;;
                    "g++ c++20 -fexceptions") [ "$cxxs" = " g++" ] || continue ;;
                    *) continue ;;
                esac
            fi
            what="$cxx -std=$std $exc"
            $cxx -std=$std $exc -O1 $warn -DCXX_HEADER_ONLY=1 -I"$inc" -I"$scn" -c "$src/tests/cxx/cxx_scenarios.cpp" \
                -o "$scratch/scn.o" || fail "cxx_scenarios.cpp with $what"
            $cxx "$scratch/scn.o" "$scratch/driver.o" "$scratch/scenario.o" "$lib" $syslibs -pthread \
                -o "$scratch/cxx_drv" || fail "link with $what"
            DAGC_TEST_SCALE=0.1 "$scratch/cxx_drv" >"$scratch/out" 2>&1 ||
                { cat "$scratch/out"; fail "the scenarios built with $what"; }
            n=$((n + 1))
        done
    done
done

# An exception that escapes: the message, then std::terminate (SIGABRT).
for cxx in $cxxs; do
    $cxx -std=c++17 $warn -I"$inc" "$src/tests/build/cxx/hpp_throw.cpp" "$lib" $syslibs -pthread \
        -o "$scratch/hpp_throw" || fail "hpp_throw.cpp with $cxx"
    for mode in task other loop group; do
        case $mode in
            task) want="dagrt.hpp: an exception escaped a task (boom in a task)" ;;
            other) want="dagrt.hpp: an exception escaped a task (not a std::exception)" ;;
            loop) want="dagrt.hpp: an exception escaped a task (boom at 500)" ;;
            group) want="dagrt.hpp: a dagrtpp::group went out of scope with tasks still counted" ;;
        esac
        set +e
        "$scratch/hpp_throw" $mode >"$scratch/out" 2>&1
        rc=$?
        set -e
        [ $rc -gt 128 ] || { cat "$scratch/out"; fail "hpp_throw $mode ($cxx): exit status $rc, not a signal"; }
        grep -qF "$want" "$scratch/out" || { cat "$scratch/out"; fail "hpp_throw $mode ($cxx): no message '$want'"; }
        if grep -q "not reached" "$scratch/out"; then fail "hpp_throw $mode ($cxx): the program went on"; fi
    done
done
echo "ok: dagrt.hpp in $n builds ($cxxs; C++17, C++20; with and without exceptions; matrix ${DAGC_MATRIX:-full}), escaping exceptions end the program"
