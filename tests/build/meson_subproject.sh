#!/bin/sh
# Builds tests/build/meson_consumer/ with the toolkit as its subproject (a
# symlink to this source tree in the scratch dir's subprojects/): the
# parent's dependency('dagrt') and find_program('dagc') find the
# subproject's, the subproject configures no tests, benchmarks or examples
# and builds only the library that default_library asks for, and the
# programs build and run; a second build does nothing; touching an
# imported .dag or editing only a comment reruns dagc and compiles no C
# file; a cost edit (costs are in the tables) compiles the graph's again.
# usage: meson_subproject.sh SOURCE_DIR SCRATCH_DIR
set -eu
src=$1 scratch=$2
fail() { echo "FAIL: $*"; exit 1; }
rm -rf "$scratch"
mkdir -p "$scratch/proj/subprojects"
ln -s "$src" "$scratch/proj/subprojects/dagc"
cp "$src/tests/build/meson_consumer/meson.build" "$src/tests/build/meson_consumer/dagc.wrap" \
   "$src/examples/consumer/hello.dag" "$src/examples/consumer/hello_ctx.h" \
   "$src/examples/consumer/main.c" "$scratch/proj/"
cp -r "$src/tests/build/cmake/lib" "$src/tests/build/cmake/tick.dag" "$src/tests/build/cmake/tick_ctx.h" \
   "$src/tests/build/cmake/tick_main.c" "$scratch/proj/"
mv "$scratch/proj/dagc.wrap" "$scratch/proj/subprojects/"
b=$scratch/b
meson setup "$b" "$scratch/proj" >"$scratch/setup.log" 2>&1 || { cat "$scratch/setup.log"; fail "meson setup"; }
grep -q "dagc is $b/subprojects/dagc/dagc/dagc\$" "$scratch/setup.log" ||
    { grep "dagc is" "$scratch/setup.log"; fail "find_program('dagc') did not find the subproject's dagc"; }
grep -Eq "Dependency dagrt.* found: YES 0\.[0-9.]+ \(overridden\)" "$scratch/setup.log" ||
    { grep -i "dagrt" "$scratch/setup.log"; fail "dependency('dagrt') did not fall back to the subproject"; }
# Nothing of the subproject's tests/, bench/ or examples/ is configured.
if grep -Eq "subprojects/dagc/(tests|bench|examples)/" "$b/build.ninja"; then
    grep -Eo "subprojects/dagc/(tests|bench|examples)/[^ :]*" "$b/build.ninja" | sort -u | head
    fail "the subproject builds its tests, benchmarks or examples"
fi
meson compile -C "$b" >"$scratch/build.log" 2>&1 || { cat "$scratch/build.log"; fail "build"; }
# Only the library the parent's default_library asks for: shared here (the
# default), static when the parent says so.
libs() { ninja -C "$1" -t targets all | grep -Eo "subprojects/dagc/runtime/libdagrt\.(so|a)\b" | sort -u | tr '\n' ' '; }
[ "$(libs "$b")" = "subprojects/dagc/runtime/libdagrt.so " ] ||
    fail "default_library=shared: the subproject builds '$(libs "$b")', not only libdagrt.so"
meson setup "$scratch/b-static" "$scratch/proj" -Ddefault_library=static >"$scratch/setup-static.log" 2>&1 ||
    { cat "$scratch/setup-static.log"; fail "meson setup -Ddefault_library=static"; }
[ "$(libs "$scratch/b-static")" = "subprojects/dagc/runtime/libdagrt.a " ] ||
    fail "default_library=static: the subproject builds '$(libs "$scratch/b-static")', not only libdagrt.a"
"$b/hello" || fail "the program failed"
meson compile -C "$b" >"$scratch/again.log" 2>&1 || fail "second build"
grep -q "no work to do" "$scratch/again.log" || { cat "$scratch/again.log"; fail "a second build did work"; }
"$b/tick" >/dev/null || fail "the program with an imported graph failed"

# dagc leaves byte-identical outputs untouched and Meson's rule re-stats
# them: touching an import, or a comment-only edit, compiles no C file.
p=$scratch/proj
compiled() { grep -q "Compiling C object" "$scratch/$1.log"; }
ran_dagc() { grep -q "Generating $2 with a custom command" "$scratch/$1.log"; }
sleep 1; touch "$p/lib/sub.dag"
meson compile -C "$b" >"$scratch/touch_import.log" 2>&1 || { cat "$scratch/touch_import.log"; fail "build after touching lib/sub.dag"; }
ran_dagc touch_import tick_c || { cat "$scratch/touch_import.log"; fail "touching the imported lib/sub.dag did not rerun dagc"; }
! ran_dagc touch_import hello_c || fail "touching tick.dag's import reran dagc on hello.dag"
! compiled touch_import || { cat "$scratch/touch_import.log"; fail "touching an imported .dag recompiled C"; }
sed -i 's/^\(    task load_a\);/\1; \/\/ loads a/' "$p/hello.dag"
grep -q "// loads a" "$p/hello.dag" || fail "the comment edit did not apply"
sleep 1
meson compile -C "$b" >"$scratch/comment_edit.log" 2>&1 || { cat "$scratch/comment_edit.log"; fail "build after a comment-only edit"; }
ran_dagc comment_edit hello_c || { cat "$scratch/comment_edit.log"; fail "a comment-only edit did not rerun dagc"; }
! compiled comment_edit || { cat "$scratch/comment_edit.log"; fail "a comment-only edit recompiled C"; }
sed -i 's/^\(    task load_a\);/\1 cost 2ms;/' "$p/hello.dag"
grep -q "cost 2ms" "$p/hello.dag" || fail "the cost edit did not apply"
sleep 1
meson compile -C "$b" >"$scratch/cost_edit.log" 2>&1 || { cat "$scratch/cost_edit.log"; fail "build after a cost edit"; }
compiled cost_edit || { cat "$scratch/cost_edit.log"; fail "a cost edit did not recompile the tables"; }
meson compile -C "$b" >"$scratch/after.log" 2>&1 || fail "build after the edits"
grep -q "no work to do" "$scratch/after.log" || { cat "$scratch/after.log"; fail "a build after the edits did work"; }
"$b/hello" >/dev/null || fail "the program failed after the cost edit"
echo "ok: Meson subproject"
