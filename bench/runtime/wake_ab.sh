#!/usr/bin/env bash
# The parked wake-up, A/B across commits, interleaved in one sitting: builds
# each commit's release libdagrt.a from `git archive` (the working tree is
# not touched), links bench/runtime/wake_ab.c (from this tree, the same
# driver for every commit) against each, then runs ROUNDS rounds, each
# running every commit's binary once in turn (TRIPS trips each). Prints
# every run, then per commit the median of the rounds' wake medians, their
# spread, and the futex floor measured beside them in the same runs.
# usage: bench/runtime/wake_ab.sh [--rounds N] [--trips N] REV...
#   (WAKE_AB_DIR: where the builds are kept, default /tmp/dagrt-wake-ab)
set -u
cd "$(dirname "$0")/../.."
rounds=5
trips=300
revs=()
while [ $# -gt 0 ]; do
  case "$1" in
    --rounds) rounds=$2; shift ;;
    --trips) trips=$2; shift ;;
    -h|--help) sed -n '2,9p' "$0"; exit 0 ;;
    *) revs+=("$1") ;;
  esac
  shift
done
[ ${#revs[@]} -ge 1 ] || { echo "usage: $0 [--rounds N] [--trips N] REV..." >&2; exit 2; }
top=${WAKE_AB_DIR:-/tmp/dagrt-wake-ab}
mkdir -p "$top"
cc=${CC:-cc}
shas=()
for r in "${revs[@]}"; do
  sha=$(git rev-parse --verify "$r^{commit}") || { echo "wake_ab: no commit $r" >&2; exit 2; }
  short=${sha:0:7}
  d=$top/$short
  if [ ! -x "$d/wake_ab" ]; then
    echo "== building $short ($r)" >&2
    rm -rf "$d"
    mkdir -p "$d/src"
    git archive "$sha" | tar -x -C "$d/src" || exit 1
    opts=(--buildtype=release -Dtests=disabled)
    # Only the options that commit has (older ones lack some).
    for o in bench_peers benchmarks liburing; do
      grep -q "option('$o'" "$d/src/meson_options.txt" && opts+=("-D$o=disabled")
    done
    meson setup "$d/build" "$d/src" "${opts[@]}" >"$d/setup.log" 2>&1 || { cat "$d/setup.log"; exit 1; }
    nice ninja -C "$d/build" runtime/libdagrt.a >"$d/build.log" 2>&1 || { tail -30 "$d/build.log"; exit 1; }
    "$cc" -O2 -std=c11 -I "$d/src/runtime/include" -I bench bench/runtime/wake_ab.c \
      "$d/build/runtime/libdagrt.a" -lpthread -o "$d/wake_ab" || exit 1
  fi
  shas+=("$short")
done
echo "# $(date -u '+%Y-%m-%d %H:%M UTC'), $(uptime | sed 's/.*load/load/'), $rounds rounds x $trips trips"
out=$top/sitting.$$
: >"$out"
for i in $(seq 1 "$rounds"); do
  for s in "${shas[@]}"; do
    res=$("$top/$s/wake_ab" "$trips") || exit 1
    w=$(echo "$res" | awk '$1 == "wake_park_us" {print $2}')
    f=$(echo "$res" | awk '$1 == "futex_floor_us" {print $2}')
    echo "round $i $s wake $w floor $f"
    echo "$s $w $f" >>"$out"
  done
done
echo "# end $(date -u '+%H:%M UTC'), $(uptime | sed 's/.*load/load/')"
python3 - "$out" "${shas[@]}" <<'PY'
import sys, statistics
rows = [l.split() for l in open(sys.argv[1])]
print("commit   wake median (rounds: min-max)      floor median (min-max)   wake/floor")
for s in sys.argv[2:]:
    w = [float(r[1]) for r in rows if r[0] == s]
    f = [float(r[2]) for r in rows if r[0] == s]
    mw, mf = statistics.median(w), statistics.median(f)
    print(f"{s}  {mw:7.2f} us ({min(w):.2f}-{max(w):.2f})        {mf:6.2f} us ({min(f):.2f}-{max(f):.2f})   {mw / mf:.2f}x")
    print("         rounds: " + " ".join(f"{x:.2f}" for x in w))
PY
rm -f "$out"
