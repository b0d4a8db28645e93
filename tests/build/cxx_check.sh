#!/bin/sh
# C++: dagrt.h compiled and run as C++11 and C++20; dagc --cxx output for
# C++ context types (tests/build/cxx/frame.dag: a namespaced class, a
# reference to a template's instantiation, a std::function) compiled as
# C++17 and run; the C golden inputs (tests/compiler/golden_c) as C++; and
# dagc --cxx for a C context, its header included from C. Every compile with -Wall -Wextra -Wpedantic -Werror, with g++ and
# clang++ (each one that is installed; C with gcc and clang likewise).
# usage: cxx_check.sh SOURCE_DIR DAGC LIBDAGRT_A SCRATCH_DIR
set -eu
src=$1 dagc=$2 lib=$3 scratch=$4
# libdagrt.a's system libraries beside -pthread (-luring), from meson.
syslibs=${DAGRT_STATIC_LINK:-}
fail() { echo "FAIL: $*"; exit 1; }
cxxs= ccs=
for c in g++ clang++; do command -v $c >/dev/null && cxxs="$cxxs $c"; done
for c in gcc clang; do command -v $c >/dev/null && ccs="$ccs $c"; done
[ -n "$cxxs" ] || { echo "SKIP: neither g++ nor clang++ is installed"; exit 77; }
for c in g++ clang++; do case " $cxxs " in *" $c "*) ;; *) echo "note: $c is not installed" ;; esac; done
t=$src/tests/build/cxx
inc=$src/runtime/include
warn="-Wall -Wextra -Wpedantic -Werror"
rm -rf "$scratch"
mkdir -p "$scratch/gen" "$scratch/c"

for cxx in $cxxs; do
    for std in c++11 c++20; do
        $cxx -std=$std $warn -I"$inc" "$t/header.cpp" "$lib" $syslibs -pthread -o "$scratch/header" ||
            fail "dagrt.h as $std with $cxx"
        "$scratch/header" || fail "dagrt.h as $std with $cxx: the program failed"
    done
done

"$dagc" --cxx "$t/frame.dag" -o "$scratch/gen" || fail "dagc --cxx frame.dag"
[ -f "$scratch/gen/frame.cpp" ] && [ -f "$scratch/gen/frame.h" ] || fail "dagc --cxx -o did not write frame.cpp and frame.h"
[ ! -e "$scratch/gen/frame.c" ] || fail "dagc --cxx wrote a .c"
for cxx in $cxxs; do
    $cxx -std=c++17 $warn -I"$scratch/gen" -I"$t" -I"$inc" "$scratch/gen/frame.cpp" "$t/main.cpp" \
        "$lib" $syslibs -pthread -o "$scratch/world" || fail "frame.cpp (C++ contexts) with $cxx"
    "$scratch/world" || fail "the C++ program ($cxx) failed"
done

# The C back end's golden inputs (every clause, function-pointer, const and
# union contexts, shared call names) emitted as C++ compile cleanly too.
mkdir "$scratch/golden"
for dag in "$src"/tests/compiler/golden_c/*.dag; do
    "$dagc" --cxx "$dag" -o "$scratch/golden" || fail "dagc --cxx $dag"
    cpp=$scratch/golden/$(basename "$dag" .dag).cpp
    for cxx in $cxxs; do
        $cxx -std=c++17 $warn -I"$src/tests/compiler/golden_c" -I"$inc" -c "$cpp" -o "$scratch/golden/x.o" ||
            fail "$(basename "$cpp") with $cxx"
    done
done

# A C context: the header is C's too; the source is still C++.
"$dagc" --cxx "$t/c_graph.dag" --h "$scratch/c/c_graph.h" || fail "dagc --cxx c_graph.dag"
[ -f "$scratch/c/c_graph.cpp" ] || fail "dagc --cxx --h put no c_graph.cpp beside the header"
for cxx in $cxxs; do
    $cxx -std=c++17 $warn -I"$t" -I"$inc" -c "$scratch/c/c_graph.cpp" -o "$scratch/c/graph.o" ||
        fail "c_graph.cpp with $cxx"
    for cc in $ccs; do
        $cc -std=c11 $warn -I"$scratch/c" -I"$t" -I"$inc" -c "$t/c_main.c" -o "$scratch/c/main.o" ||
            fail "c_main.c (the --cxx header from C) with $cc"
        $cxx "$scratch/c/main.o" "$scratch/c/graph.o" "$lib" $syslibs -pthread -o "$scratch/c/prog" || fail "link ($cc, $cxx)"
        "$scratch/c/prog" || fail "the C program ($cc, $cxx) failed"
    done
done
echo "ok: C++ ($cxxs)"
