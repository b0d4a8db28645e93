#!/usr/bin/env bash
# The middleware snapshots (Box2D v3, Jolt Physics, Tracy) for the
# integration tests (docs/runtime.md, "Middleware on the same pool", "In
# Tracy").
#
#   scripts/middleware.sh DIR
#     unpacks them into DIR through scripts/packagecache.sh (sha256 checked,
#     once) and prints the meson options that name the trees
#     (-Dbox2d_src=... -Djolt_src=... -Dtracy_src=...) and the middleware
#     cache (-Dmiddleware_cache=...); with Tracy and zstd, the folder of
#     Tracy's capture tools (-Dtracy_tools=..., scripts/tracy-tools.sh:
#     built into the middleware cache on the first run). Prints nothing for a snapshot the package
#     cache lacks: those tests then skip, saying how to enable them.
#   scripts/middleware.sh --store BUILD
#     copies the vendor libraries that BUILD compiled (Box2D, Jolt and their
#     own test apps' files: integrations/meson.build) into the middleware
#     cache it was configured with, when that cache does not have them yet.
#
# The middleware cache: ${DAGRT_MIDDLEWARE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/dagrt/middleware}/KEY,
# KEY the sha256 of all that makes those libraries: the snapshots' sha256,
# the C and C++ compilers ($CC, $CXX: their --version), meson's version and
# the build files that compile them (the top meson.build's defaults,
# integrations/meson.build, tests/integrations/meson.build). A build whose
# cache folder has a library links it instead of compiling it (a cold
# cache: the first run compiles them, scripts/test.sh stores them); our
# adapters and every integration test are compiled and run each time.
# DAGRT_MIDDLEWARE_CACHE=none: no cache (everything compiled here).
#   (package cache: $DAGRT_PACKAGECACHE, else ../shared/packagecache)
set -u
here=$(dirname "$0")
root=$(cd "$here/.." && pwd)

if [ "${1:-}" = --store ]; then
  b=${2:?usage: scripts/middleware.sh --store BUILD}
  cache=$(meson introspect "$b" --buildoptions 2>/dev/null |
    python3 -c 'import json, sys; print(next((o["value"] for o in json.load(sys.stdin) if o["name"] == "middleware_cache"), ""))')
  [ -n "$cache" ] || exit 0
  [ -f "$cache/complete" ] && exit 0
  tmp=$(mktemp -d "$(dirname "$cache")/.store.XXXXXX") || exit 1
  n=0
  for lib in integrations/libbox2d_vendor.a integrations/libjolt_vendor.a \
             tests/integrations/libbox2d_tests.a tests/integrations/libjolt_ut.a; do
    [ -f "$b/$lib" ] || continue
    # Meson's archives are thin (their members stay in the build
    # folder): the cache gets a real one with the same members.
    members=$(cd "$(dirname "$b/$lib")" && ar t "$(basename "$lib")") || { rm -rf "$tmp"; exit 1; }
    # shellcheck disable=SC2086 # one member a word (meson's names have no spaces)
    (cd "$(dirname "$b/$lib")" && ar qc "$tmp/$(basename "$lib")" $members && ranlib "$tmp/$(basename "$lib")") ||
      { rm -rf "$tmp"; exit 1; }
    n=$((n + 1))
  done
  if [ $n -gt 0 ]; then
    touch "$tmp/complete"
    # Atomic: another run storing the same key at once keeps its own.
    mv -T "$tmp" "$cache" 2>/dev/null && { echo "middleware.sh: $n vendor libraries stored in $cache"; exit 0; }
  fi
  rm -rf "$tmp"
  exit 0
fi

dir=${1:?usage: scripts/middleware.sh DIR | --store BUILD}
out=$("$here/packagecache.sh" "$dir" box2d JoltPhysics tracy zstd)
status=$?
snapshots=
while IFS='=' read -r name tree; do
  case $name in
    box2d) echo "-Dbox2d_src=$tree"; snapshots="$snapshots box2d" ;;
    JoltPhysics) echo "-Djolt_src=$tree"; snapshots="$snapshots JoltPhysics" ;;
    tracy) echo "-Dtracy_src=$tree"; snapshots="$snapshots tracy"; tracy_tree=$tree ;;
    zstd) zstd_tree=$tree ;;
  esac
done <<< "$out"
# Tracy's capture tools (the Tracy end-to-end test): from the middleware
# cache, built there on the first run. Not built: the test says so and skips.
if [ -n "${tracy_tree:-}" ] && [ -n "${zstd_tree:-}" ]; then
  tt=$("$here/tracy-tools.sh" "$tracy_tree" "$zstd_tree" "$dir") && echo "-Dtracy_tools=$tt"
fi
base=${DAGRT_MIDDLEWARE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/dagrt/middleware}
if [ -n "$snapshots" ] && [ "$base" != none ]; then
  pkg=${DAGRT_PACKAGECACHE:-$root/../shared/packagecache}
  key=$( {
    for s in $snapshots; do awk -v p="$s-" 'index($2, p) == 1 && $2 ~ /\.tar\.gz$/ { print $1, $2 }' "$pkg/README.md"; done
    "${CC:-cc}" --version 2>&1 | head -n 1
    "${CXX:-c++}" --version 2>&1 | head -n 1
    meson --version
    sha256sum "$root/meson.build" "$root/integrations/meson.build" "$root/tests/integrations/meson.build" | cut -d' ' -f1
  } | sha256sum | cut -c1-16)
  mkdir -p "$base" && echo "-Dmiddleware_cache=$base/$key"
fi
exit $status
