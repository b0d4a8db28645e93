#!/bin/sh
# Builds tests/build/cmake/ (a CMake project using find_package(dagrt) and
# dagc_add_graph) against a `meson install --destdir` tree of this build,
# with one CMake generator, and checks what a build system must get right:
# it builds and runs; a second build does nothing; touching the .dag, a
# header it includes or a .dag it imports (IMPORT_DIRS) reruns dagc, and
# touching the import or editing only a comment compiles nothing; a bad .dag
# fails the build with dagc's diagnostic in the build output. A C++ target
# takes the graph as C++ (dagc_add_graph ... CXX, into an OUTPUT_DIR); a
# library takes two graphs at once, returns the generated files (OUT_VAR)
# and makes their directory PUBLIC for a program that includes its public
# header. Also: the SONAME, and that the CMake package and dagrt.pc agree
# on the version.
# usage: cmake_consumer.sh BUILD_DIR SOURCE_DIR GENERATOR SCRATCH_DIR
set -eu
build=$1 src=$2 gen=$3 scratch=$4
command -v cmake >/dev/null || { echo "SKIP: cmake is not installed"; exit 77; }
case $gen in
    Ninja) command -v ninja >/dev/null || { echo "SKIP: ninja is not installed"; exit 77; } ;;
    *) command -v make >/dev/null || { echo "SKIP: make is not installed"; exit 77; } ;;
esac
fail() { echo "FAIL: $*"; exit 1; }
# Every generator builds on every CPU (Make's default is one job).
CMAKE_BUILD_PARALLEL_LEVEL=${CMAKE_BUILD_PARALLEL_LEVEL:-$(nproc 2>/dev/null || echo 2)}
export CMAKE_BUILD_PARALLEL_LEVEL

rm -rf "$scratch"
mkdir -p "$scratch/proj"
meson install -C "$build" --no-rebuild --quiet --destdir "$scratch/root" >"$scratch/install.log" 2>&1 ||
    { cat "$scratch/install.log"; fail "meson install"; }
pc=$(find "$scratch/root" -name dagrt.pc | head -n 1)
cfgdir=$(dirname "$(find "$scratch/root" -name dagrtConfig.cmake | head -n 1)")
[ -f "$cfgdir/dagrtConfigVersion.cmake" ] || fail "the CMake package was not installed"
version=$(sed -n 's/^Version: //p' "$pc")
prefix=$(sed -n 's/^prefix=//p' "$pc")

# The SONAME carries the ABI version (0.MINOR before 1.0).
so=$(find "$scratch/root" -name libdagrt.so | head -n 1)
major=${version%%.*}
minor=${version#*.}; minor=${minor%%.*}
[ "$major" = 0 ] && want_so="libdagrt.so.0.$minor" || want_so="libdagrt.so.$major"
readelf -d "$so" | grep -q "Library soname: \[$want_so\]" || fail "SONAME is not $want_so"

# The version file: same major (and minor, before 1.0), not newer.
cat >"$scratch/ver.cmake" <<EOS
cmake_minimum_required(VERSION 3.20)
foreach(req IN ITEMS "$major.$minor:TRUE" "$major:TRUE" "$version:TRUE"
                     "$major.$((minor + 1)):FALSE" "$((major + 1)).0:FALSE")
  string(REPLACE ":" ";" p "\${req}")
  list(GET p 0 PACKAGE_FIND_VERSION)
  list(GET p 1 want)
  string(REPLACE "." ";" parts "\${PACKAGE_FIND_VERSION}.")
  list(GET parts 0 PACKAGE_FIND_VERSION_MAJOR)
  list(GET parts 1 PACKAGE_FIND_VERSION_MINOR)
  unset(PACKAGE_VERSION_COMPATIBLE)
  set(CMAKE_SIZEOF_VOID_P 8)
  include("$cfgdir/dagrtConfigVersion.cmake")
  if(NOT "\${PACKAGE_VERSION_COMPATIBLE}" STREQUAL want)
    message(FATAL_ERROR "version \${PACKAGE_FIND_VERSION}: compatible=\${PACKAGE_VERSION_COMPATIBLE}, expected \${want}")
  endif()
endforeach()
EOS
cmake -P "$scratch/ver.cmake" || fail "dagrtConfigVersion.cmake"

cp "$src/examples/consumer/hello.dag" "$src/examples/consumer/hello_ctx.h" \
   "$src/examples/consumer/main.c" "$src/tests/build/cmake/CMakeLists.txt" "$scratch/proj/"
cp -r "$src/tests/build/cxx" "$scratch/proj/cxx"
cp -r "$src/tests/build/cmake/lib" "$src/tests/build/cmake/engine" "$src/tests/build/cmake/tick.dag" "$src/tests/build/cmake/tick.costs" "$src/tests/build/cmake/tick_ctx.h" \
   "$src/tests/build/cmake/tick_main.c" "$scratch/proj/"
p=$scratch/proj b=$scratch/b
cmake -S "$p" -B "$b" -G "$gen" -DCMAKE_PREFIX_PATH="$scratch/root$prefix" \
    -DWANT_VERSION="$major.$minor" >"$scratch/configure.log" 2>&1 ||
    { cat "$scratch/configure.log"; fail "configure"; }
grep -q "dagrt_VERSION=$version\$" "$scratch/configure.log" ||
    fail "the CMake package's version is not dagrt.pc's $version"
g=$b/dagc/engine
grep -q "engine_generated=$g/render.c;$g/render.h;$g/audio.c;$g/audio.h\$" "$scratch/configure.log" ||
    { grep engine_generated "$scratch/configure.log"; fail "OUT_VAR is not the generated files"; }

# dagrt.hpp through pkg-config: the installed dagrt.pc's flags find it.
if command -v pkg-config >/dev/null && command -v c++ >/dev/null; then
    printf '#include <dagrt.hpp>\nint main() { dagrtpp::runtime rt; return rt ? 0 : 1; }\n' >"$scratch/pc.cpp"
    PKG_CONFIG_SYSROOT_DIR="$scratch/root" PKG_CONFIG_PATH=$(dirname "$pc") \
        c++ -std=c++17 "$scratch/pc.cpp" -o "$scratch/pc" \
        $(PKG_CONFIG_SYSROOT_DIR="$scratch/root" PKG_CONFIG_PATH=$(dirname "$pc") pkg-config --cflags --libs dagrt) \
        -pthread >"$scratch/pc.log" 2>&1 || { cat "$scratch/pc.log"; fail "dagrt.hpp through pkg-config"; }
fi

n=0
build() { # build LOG_NAME: builds, output in $scratch/LOG_NAME.log
    n=$((n + 1))
    cmake --build "$b" >"$scratch/$1.log" 2>&1
}
ran_dagc() { grep -q "dagc ${2:-hello}.dag" "$scratch/$1.log"; }
noop() { # nothing rerun, nothing compiled or linked
    ! grep -Eq "dagc |Building|Linking|dot hello" "$scratch/$1.log" &&
    { [ "$gen" != Ninja ] || grep -q "no work to do" "$scratch/$1.log"; }
}

build first || { cat "$scratch/first.log"; fail "first build"; }
ran_dagc first || fail "the first build did not run dagc"
[ -f "$b/dagc/hello/hello.svg" ] || [ -z "$(command -v dot)" ] || fail "DOT: no hello.svg"
"$b/hello" || fail "the program failed"
[ -f "$b/gen/world/frame.cpp" ] || fail "CXX: no gen/world/frame.cpp (OUTPUT_DIR)"
"$b/world" || fail "the C++ program failed"
"$b/tick" || fail "the program with an imported graph failed"
"$b/engine_main" || fail "the program using the library of two graphs failed"
! readelf -d "$b/tick" | grep -q "NEEDED.*libdagrt" || fail "dagrt::dagrt_static linked the shared library"
readelf -d "$b/hello" | grep -q "NEEDED.*\[$want_so\]" || fail "hello does not link $want_so"

build second || fail "second build"
noop second || { cat "$scratch/second.log"; fail "a second build did work"; }

# mtimes: one second apart, so that every make sees them newer.
sleep 1; touch "$p/hello.dag"
build touch_dag || fail "build after touching hello.dag"
ran_dagc touch_dag || { cat "$scratch/touch_dag.log"; fail "touching hello.dag did not rerun dagc"; }
build after_dag && noop after_dag || { cat "$scratch/after_dag.log"; fail "a build after the rerun did work"; }

sleep 1; touch "$p/hello_ctx.h"
build touch_h || fail "build after touching hello_ctx.h"
ran_dagc touch_h || { cat "$scratch/touch_h.log"; fail "touching the included header did not rerun dagc"; }

sleep 1; touch "$p/lib/sub.dag"
build touch_import || fail "build after touching the imported lib/sub.dag"
ran_dagc touch_import tick || { cat "$scratch/touch_import.log"; fail "touching an imported .dag did not rerun dagc"; }
! ran_dagc touch_import hello || fail "touching tick.dag's import reran dagc on hello.dag"
# dagc leaves an output whose bytes did not change untouched; Ninja
# re-stats it, and make sees the rule's stamp newer than its inputs: with
# both, touching an import or editing only a comment compiles nothing (a
# cost is in the tables: editing one recompiles).
compiled() { grep -Eq "Building (C|CXX) object" "$scratch/$1.log"; }
! compiled touch_import || { cat "$scratch/touch_import.log"; fail "touching an imported .dag recompiled C"; }
build after_import && noop after_import || { cat "$scratch/after_import.log"; fail "a build after touching the import did work"; }
cp "$p/hello.dag" "$scratch/hello.dag.nocost"
sed -i 's/^\(    task load_a\);/\1; \/\/ loads a/' "$p/hello.dag"
grep -q "// loads a" "$p/hello.dag" || fail "the comment edit did not apply"
sleep 1
build cost_edit || fail "build after a comment-only edit"
ran_dagc cost_edit || { cat "$scratch/cost_edit.log"; fail "a comment edit did not rerun dagc"; }
! compiled cost_edit || { cat "$scratch/cost_edit.log"; fail "a comment-only edit recompiled C"; }
build after_cost && noop after_cost || { cat "$scratch/after_cost.log"; fail "a build after the comment edit did work"; }
cp "$scratch/hello.dag.nocost" "$p/hello.dag"
build restore_hello || fail "build after restoring hello.dag"
# COSTS: the costs file is an input of tick's rule (and in its depfile): a
# new profile reruns dagc on tick.dag alone, and the tables it changes are
# compiled again.
grep -q "5000, /\* begin" "$b/dagc/tick/tick.c" || fail "COSTS: the tables lack the measured costs"
sleep 1; sed -i 's/^tick.begin 5000$/tick.begin 7000/' "$p/tick.costs"
build costs_edit || { cat "$scratch/costs_edit.log"; fail "build after editing tick.costs"; }
ran_dagc costs_edit tick || { cat "$scratch/costs_edit.log"; fail "editing the COSTS file did not rerun dagc"; }
! ran_dagc costs_edit hello || fail "editing tick's COSTS file reran dagc on hello.dag"
compiled costs_edit || { cat "$scratch/costs_edit.log"; fail "new costs did not recompile the tables"; }
grep -q "7000, /\* begin" "$b/dagc/tick/tick.c" || fail "COSTS: the tables do not carry the new cost"
# A real edit of one of the library's two graphs reruns dagc on it alone and
# recompiles what includes its header.
sleep 1; sed -i 's/^    task mix;/    task mix;\n    task fade after mix;/' "$p/engine/audio.dag"
printf 'void audio_fade(struct engine_ctx *c) { (void)c; }\n' >>"$p/engine/engine.c"
build edit_audio || { cat "$scratch/edit_audio.log"; fail "build after editing audio.dag"; }
ran_dagc edit_audio engine/audio || { cat "$scratch/edit_audio.log"; fail "editing audio.dag did not rerun dagc on it"; }
! ran_dagc edit_audio engine/render || fail "editing audio.dag reran dagc on render.dag"
grep -q "Building C object.*engine_main.c.o" "$scratch/edit_audio.log" ||
    { cat "$scratch/edit_audio.log"; fail "audio.h changed, but engine_main.c (which includes it) was not recompiled"; }
"$b/engine_main" >/dev/null || fail "the engine program failed after the edit"

cp "$p/hello.dag" "$scratch/hello.dag.good"
printf 'graph broken {\n    task a after nowhere;\n}\n' >>"$p/hello.dag"
if build bad; then fail "a bad .dag did not fail the build"; fi
grep -q "hello.dag:11:18: error: unknown name 'nowhere'" "$scratch/bad.log" ||
    { cat "$scratch/bad.log"; fail "dagc's diagnostic is not in the build output"; }
cp "$scratch/hello.dag.good" "$p/hello.dag"
build fixed || { cat "$scratch/fixed.log"; fail "build after fixing the .dag"; }
"$b/hello" >/dev/null || fail "the program failed after the fix"
# Misuse of dagc_add_graph is a configure error that says what is wrong.
mkdir -p "$scratch/misuse"
cp "$p/hello.dag" "$p/hello_ctx.h" "$scratch/misuse/"
for case in "nosuch hello.dag:'nosuch' is not a target" \
            "hello hello.dag BOGUS:unknown arguments: BOGUS" \
            "hello hello.dag CXX:the generated source is CXX;" \
            "hello DOT:no .dag file given" \
            "hello hello.dag sub/hello.dag:two files are named hello.dag"; do
    args=${case%%:*} want=${case#*:}
    printf 'cmake_minimum_required(VERSION 3.20)\nproject(misuse C)\nfind_package(dagrt CONFIG REQUIRED)\nadd_executable(hello hello.c)\ndagc_add_graph(%s)\n' \
        "$args" >"$scratch/misuse/CMakeLists.txt"
    if cmake -S "$scratch/misuse" -B "$scratch/misuse/b" -G "$gen" -DCMAKE_PREFIX_PATH="$scratch/root$prefix" \
        >"$scratch/misuse.log" 2>&1; then
        fail "dagc_add_graph($args) configured"
    fi
    grep -q "$want" "$scratch/misuse.log" || { cat "$scratch/misuse.log"; fail "dagc_add_graph($args): no '$want'"; }
    rm -rf "$scratch/misuse/b"
done
echo "ok: CMake ($gen): $n builds"
