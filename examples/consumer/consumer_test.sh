#!/bin/sh
# Installs the build into a scratch root (meson install --destdir), then
# builds examples/consumer against it the way an outside project would:
# the installed dagc generates C, pkg-config (with the relocated prefix)
# gives the flags, and the program links the installed libdagrt and runs.
# usage: consumer_test.sh BUILD_DIR SOURCE_DIR
set -eu
build=$1
src=$2
tmp=$(mktemp -d /tmp/dagc-consumer-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
meson install -C "$build" --no-rebuild --quiet --destdir "$tmp/root" >"$tmp/install.log" 2>&1 ||
    { cat "$tmp/install.log"; exit 1; }
pc=$(find "$tmp/root" -name dagrt.pc | head -n 1)
[ -n "$pc" ] || { echo "dagrt.pc was not installed"; exit 1; }
dagc=$(find "$tmp/root" -path '*/bin/dagc' | head -n 1)
[ -x "$dagc" ] || { echo "dagc was not installed"; exit 1; }
man=$(find "$tmp/root" -name dagc.1 | head -n 1)
[ -n "$man" ] || { echo "dagc.1 was not installed"; exit 1; }
for f in dagrt.h libdagrt.a libdagrt.so; do
    [ -n "$(find "$tmp/root" -name "$f" | head -n 1)" ] || { echo "$f was not installed"; exit 1; }
done
cp -r "$src/examples/consumer" "$tmp/consumer"
mkdir "$tmp/out"
# The .pc names the real prefix; point it into the scratch root (what a
# user of a relocated install does; --define-prefix cannot infer it from a
# multiarch libdir).
prefix=$(sed -n 's/^prefix=//p' "$pc")
make -s -C "$tmp/consumer" O="$tmp/out" DAGC="$dagc" \
    PKG_CONFIG="pkg-config --define-variable=prefix=$tmp/root$prefix" PKG_CONFIG_PATH="$(dirname "$pc")"
LD_LIBRARY_PATH="$(dirname "$(find "$tmp/root" -name libdagrt.so | head -n 1)")" "$tmp/out/hello"
