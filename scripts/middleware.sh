#!/usr/bin/env bash
# The middleware snapshots (Box2D v3, Jolt Physics) for the integration
# tests (docs/runtime.md, "Middleware on the same pool"): unpacks them into
# DIR through scripts/packagecache.sh (sha256 checked, once) and prints the
# meson options that name the trees (-Dbox2d_src=... -Djolt_src=...).
# Prints nothing for a snapshot the cache lacks: those tests then skip,
# saying how to enable them.
#   usage: scripts/middleware.sh DIR      (cache: $DAGRT_PACKAGECACHE, else ../shared/packagecache)
set -u
here=$(dirname "$0")
dir=${1:?usage: scripts/middleware.sh DIR}
out=$("$here/packagecache.sh" "$dir" box2d JoltPhysics)
status=$?
while IFS='=' read -r name tree; do
  case $name in
    box2d) echo "-Dbox2d_src=$tree" ;;
    JoltPhysics) echo "-Djolt_src=$tree" ;;
  esac
done <<< "$out"
exit $status
