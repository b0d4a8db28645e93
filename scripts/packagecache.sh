#!/usr/bin/env bash
# The one way the build reaches the package cache's third-party snapshots
# (../shared/packagecache: Box2D v3, Jolt Physics, Taskflow, enkiTS, Tracy, zstd; their
# commits, licenses and sha256 sums are listed in its README.md): unpacks
# each named snapshot into DIR once, after checking the tarball's sha256
# against that list, and prints one line NAME=TREE per snapshot found (the
# unpacked tree's top folder). A snapshot that is not in the cache is
# skipped with a message on stderr (the tests and benchmarks that need it
# then skip, saying how to enable them); a checksum that does not match
# is an error (exit 1), and nothing of that snapshot is used.
#   usage: scripts/packagecache.sh [--cache CACHE] DIR NAME...
#   NAME: the tarball's prefix (box2d, JoltPhysics, taskflow, enkiTS, tracy, zstd).
#   CACHE: --cache, else $DAGRT_PACKAGECACHE, else ../shared/packagecache
#   beside the source tree.
# Used by scripts/middleware.sh (scripts/test.sh: the integration tests, Tracy's tools)
# and at configure time by bench/frame/meson.build (bench_frame's and
# bench/middleware's peers).
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
cache=${DAGRT_PACKAGECACHE:-}
if [ "${1:-}" = --cache ]; then cache=${2:-}; shift 2; fi
[ -n "$cache" ] || cache=$root/../shared/packagecache
dir=${1:?usage: scripts/packagecache.sh [--cache CACHE] DIR NAME...}
shift
if [ ! -f "$cache/README.md" ]; then
  echo "packagecache.sh: no package cache at $cache (no README.md): $* skipped" >&2
  exit 0
fi
mkdir -p "$dir" || exit 1
dir=$(cd "$dir" && pwd)

status=0
for name in "$@"; do
  tgz=$(ls "$cache/$name"-*.tar.gz 2>/dev/null | head -n 1)
  if [ -z "$tgz" ]; then
    echo "packagecache.sh: no $name-*.tar.gz in $cache: skipped" >&2
    continue
  fi
  base=$(basename "$tgz" .tar.gz)
  if [ ! -f "$dir/$base/.unpacked" ]; then
    want=$(awk -v f="$base.tar.gz" '$2 == f { print $1 }' "$cache/README.md")
    got=$(sha256sum "$tgz" | cut -d' ' -f1)
    if [ -z "$want" ] || [ "$want" != "$got" ]; then
      echo "packagecache.sh: $tgz: sha256 $got does not match the cache's README.md (${want:-none listed})" >&2
      status=1
      continue
    fi
    rm -rf "${dir:?}/$base"
    if ! { mkdir -p "$dir/$base" && tar xzf "$tgz" -C "$dir/$base"; }; then
      echo "packagecache.sh: $tgz: cannot unpack into $dir/$base" >&2
      status=1
      continue
    fi
    # git archive puts everything under one folder: name that tree.
    inner=$(ls "$dir/$base")
    if [ "$(echo "$inner" | wc -l)" = 1 ] && [ -d "$dir/$base/$inner" ]; then
      echo "$inner" > "$dir/$base/.inner"
    fi
    touch "$dir/$base/.unpacked"
  fi
  if [ -f "$dir/$base/.inner" ]; then echo "$name=$dir/$base/$(cat "$dir/$base/.inner")"
  else echo "$name=$dir/$base"; fi
done
exit $status
