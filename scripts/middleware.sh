#!/usr/bin/env bash
# Unpacks the middleware snapshots of the package cache (Box2D v3, Jolt
# Physics; the integration tests build against them, docs/runtime.md
# "Middleware on the same pool") into DIR, once, after checking each
# tarball's sha256 against the list in the cache's README.md, and prints the
# meson options that name the trees (-Dbox2d_src=... -Djolt_src=...). Prints nothing when the cache or a
# snapshot is missing: the tests then skip, saying how to enable them.
#   usage: scripts/middleware.sh DIR      (cache: $DAGRT_PACKAGECACHE, else ../shared/packagecache)
set -u
cd "$(dirname "$0")/.."
dir=${1:?usage: scripts/middleware.sh DIR}
cache=${DAGRT_PACKAGECACHE:-../shared/packagecache}
[ -f "$cache/README.md" ] || exit 0
mkdir -p "$dir" || exit 1
dir=$(cd "$dir" && pwd)

# unpack NAME-PREFIX: the tree's path on stdout, or nothing.
unpack() {
  local tgz
  tgz=$(ls "$cache/$1"-*.tar.gz 2>/dev/null | head -n 1)
  [ -n "$tgz" ] || return 0
  local base; base=$(basename "$tgz" .tar.gz)
  if [ ! -f "$dir/$base/.unpacked" ]; then
    local want got
    want=$(awk -v f="$base.tar.gz" '$2 == f { print $1 }' "$cache/README.md")
    got=$(sha256sum "$tgz" | cut -d' ' -f1)
    if [ -z "$want" ] || [ "$want" != "$got" ]; then
      echo "middleware.sh: $tgz: sha256 $got does not match the cache's README.md (${want:-none listed})" >&2
      return 1
    fi
    rm -rf "${dir:?}/$base"
    mkdir -p "$dir/$base" && tar xzf "$tgz" -C "$dir/$base" || return 1
    # git archive puts everything under one folder: name the tree itself.
    local inner; inner=$(ls "$dir/$base")
    [ "$(echo "$inner" | wc -l)" = 1 ] && [ -d "$dir/$base/$inner" ] && echo "$inner" > "$dir/$base/.inner"
    touch "$dir/$base/.unpacked"
  fi
  if [ -f "$dir/$base/.inner" ]; then echo "$dir/$base/$(cat "$dir/$base/.inner")"; else echo "$dir/$base"; fi
}

status=0
box2d=$(unpack box2d) || status=1
[ -n "$box2d" ] && echo "-Dbox2d_src=$box2d"
jolt=$(unpack JoltPhysics) || status=1
[ -n "$jolt" ] && echo "-Djolt_src=$jolt"
exit $status
