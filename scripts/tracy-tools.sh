#!/usr/bin/env bash
# Tracy's capture tools for the Tracy end-to-end test (integrations/tracy,
# tests/integrations/tracy_e2e.py): tracy-capture, tracy-csvexport and our
# reader dagrt-tracy-read, built offline from the package cache's Tracy
# and zstd snapshots by integrations/tracy/tools/CMakeLists.txt (which says
# how each dependency is met), into the middleware cache once.
#
#   scripts/tracy-tools.sh TRACY_TREE ZSTD_TREE WORKDIR
#     prints the folder that holds the three tools (exit 0), building
#     them first when the cache has none for this key; exit 1 (with why
#     on stderr) when they cannot be built.
#
# The folder: ${DAGRT_MIDDLEWARE_CACHE:-${XDG_CACHE_HOME:-~/.cache}/dagrt/middleware}/tracy-tools-KEY,
# KEY the sha256 of the two snapshots' trees, the C and C++ compilers,
# cmake's version and the files of integrations/tracy/tools. With
# DAGRT_MIDDLEWARE_CACHE=none they are built in WORKDIR/tracy-tools.
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
tracy=${1:?usage: scripts/tracy-tools.sh TRACY_TREE ZSTD_TREE WORKDIR}
zstd=${2:?usage: scripts/tracy-tools.sh TRACY_TREE ZSTD_TREE WORKDIR}
work=${3:?usage: scripts/tracy-tools.sh TRACY_TREE ZSTD_TREE WORKDIR}
tools="tracy-capture tracy-csvexport dagrt-tracy-read"
for t in cmake ninja pkg-config; do
  command -v $t >/dev/null || { echo "tracy-tools.sh: no $t: the Tracy tools are not built" >&2; exit 1; }
done
pkg-config --exists capstone ||
  { echo "tracy-tools.sh: no capstone (Debian: libcapstone-dev): the Tracy tools are not built" >&2; exit 1; }
base=${DAGRT_MIDDLEWARE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/dagrt/middleware}
key=$( {
  basename "$(dirname "$tracy")"; basename "$(dirname "$zstd")"
  "${CC:-cc}" --version 2>&1 | head -n 1
  "${CXX:-c++}" --version 2>&1 | head -n 1
  cmake --version | head -n 1
  sha256sum "$root"/integrations/tracy/tools/CMakeLists.txt "$root"/integrations/tracy/tools/*.cpp \
    "$root"/integrations/tracy/tools/ppqsort/* | cut -d' ' -f1
} | sha256sum | cut -c1-16)
if [ "$base" = none ]; then dest=$work/tracy-tools; else dest=$base/tracy-tools-$key; fi
have=1
for t in $tools; do [ -x "$dest/$t" ] || have=0; done
if [ $have = 1 ]; then echo "$dest"; exit 0; fi

mkdir -p "$work" || exit 1
b=$work/tracy-tools-build
t0=$(date +%s)
echo "tracy-tools.sh: building $tools from the package cache (once: several minutes on 2 cores)" >&2
if ! cmake -S "$root/integrations/tracy/tools" -B "$b" -G Ninja -DCMAKE_BUILD_TYPE=Release \
       -DTRACY_SRC="$tracy" -DZSTD_SRC="$zstd" >"$work/tracy-tools.log" 2>&1 ||
   ! ninja -C "$b" -j "${DAGRT_TRACY_JOBS:-2}" $tools >>"$work/tracy-tools.log" 2>&1; then
  echo "tracy-tools.sh: the Tracy tools did not build (the last lines of $work/tracy-tools.log):" >&2
  tail -n 15 "$work/tracy-tools.log" >&2
  exit 1
fi
echo "tracy-tools.sh: built in $(( $(date +%s) - t0 )) s" >&2
if [ "$base" = none ]; then
  mkdir -p "$dest" && for t in $tools; do cp "$b/$t" "$dest/" || exit 1; done
else
  mkdir -p "$base" || exit 1
  tmp=$(mktemp -d "$base/.tracy-tools.XXXXXX") || exit 1
  for t in $tools; do cp "$b/$t" "$tmp/" || { rm -rf "$tmp"; exit 1; }; done
  # Atomic: a run storing the same key at once keeps its own.
  mv -T "$tmp" "$dest" 2>/dev/null || rm -rf "$tmp"
fi
echo "$dest"
