#!/usr/bin/env bash
# The parked wake-up, A/B across commits, interleaved in one sitting: builds
# each commit's release libdagrt.a from `git archive` (the working tree is
# not touched), links bench/runtime/wake_ab.c (from this tree, the same
# driver for every commit) against each, then runs ROUNDS rounds, each
# running every commit's binary once in turn, the order rotated by one each
# round (TRIPS trips each). Prints
# every run, then per commit the median of the rounds' wake medians, their
# spread, and the futex floor measured beside them in the same runs.
# usage: bench/runtime/wake_ab.sh [--rounds N] [--trips N] REV...
#   WAKE_AB_DIR: where the builds are kept (default /tmp/dagrt-wake-ab);
#   WAKE_AB_WRAP: a command each run goes through, e.g. "chrt -f 10" (a
#   real-time priority: other processes' load no longer delays the runs'
#   threads, only the hypervisor's does; say so beside its figures).
set -u
cd "$(dirname "$0")/../.."
rounds=5
trips=300
revs=()
while [ $# -gt 0 ]; do
  case "$1" in
    --rounds) rounds=$2; shift ;;
    --trips) trips=$2; shift ;;
    -h|--help) sed -n '2,13p' "$0"; exit 0 ;;
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
echo "# $(date -u '+%Y-%m-%d %H:%M UTC'), $(uptime | sed 's/.*load/load/'), $rounds rounds x $trips trips${WAKE_AB_WRAP:+, through $WAKE_AB_WRAP}"
out=$top/sitting.$$
: >"$out"
n=${#shas[@]}
for i in $(seq 1 "$rounds"); do
  # Each round starts one commit further on, so that no commit always
  # runs first (or right after the same one).
  for j in $(seq 0 $((n - 1))); do
    s=${shas[$(( (i - 1 + j) % n ))]}
    res=$(${WAKE_AB_WRAP:-} "$top/$s/wake_ab" "$trips") || exit 1
    w=$(echo "$res" | awk '$1 == "wake_park_us" {print $2}')
    f=$(echo "$res" | awk '$1 == "futex_floor_us" {print $2}')
    echo "round $i $s wake $w floor $f"
    echo "$s $w $f" >>"$out"
  done
done
echo "# end $(date -u '+%H:%M UTC'), $(uptime | sed 's/.*load/load/')"
python3 - "$out" "${shas[@]}" <<'PY'
# Per commit: the median of its rounds' wake medians (min-max), the floor
# the same way, the median of each run's own wake/floor, and the median of
# the per-round ratio to the first commit named (its run in the same round,
# seconds apart: the least load-sensitive figure here).
import sys, statistics as st
rows = [l.split() for l in open(sys.argv[1])]
shas = sys.argv[2:]
w = {s: [float(r[1]) for r in rows if r[0] == s] for s in shas}
f = {s: [float(r[2]) for r in rows if r[0] == s] for s in shas}
print("commit   wake median (min-max)     floor median (min-max)   run wake/floor   round ratio to " + shas[0])
for s in shas:
    ratio = [a / b for a, b in zip(w[s], f[s]) if b > 0]
    pair = [a / b for a, b in zip(w[s], w[shas[0]])]
    print(f"{s}  {st.median(w[s]):6.2f} us ({min(w[s]):.2f}-{max(w[s]):.2f})   "
          f"{st.median(f[s]):6.2f} us ({min(f[s]):.2f}-{max(f[s]):.2f})   "
          f"{st.median(ratio):.2f}x ({min(ratio):.2f}-{max(ratio):.2f})   "
          f"{st.median(pair):.3f} ({min(pair):.2f}-{max(pair):.2f})")
    print("         rounds: " + " ".join(f"{x:.2f}" for x in w[s]))
PY
rm -f "$out"
