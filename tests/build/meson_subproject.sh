#!/bin/sh
# Builds tests/build/meson_consumer/ with the toolkit as its subproject (a
# symlink to this source tree in the scratch dir's subprojects/): the
# parent's dependency('dagrt') and find_program('dagc') find the
# subproject's, the subproject configures no tests, benchmarks or examples,
# and the program builds and runs; a second build does nothing.
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
"$b/hello" || fail "the program failed"
meson compile -C "$b" >"$scratch/again.log" 2>&1 || fail "second build"
grep -q "no work to do" "$scratch/again.log" || { cat "$scratch/again.log"; fail "a second build did work"; }
echo "ok: Meson subproject"
