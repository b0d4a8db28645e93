#!/usr/bin/env bash
# Jolt's PerformanceTest scenes that load no assets, Jolt's own
# JobSystemThreadPool against dagrt_jolt::JobSystem, side by side:
# each round runs every scene at each thread count with both builds, the
# one that goes first alternating; per scene the median steps/second over
# rounds, the ratio dagrt/jolt (above 1: libdagrt faster), the geometric
# mean, whether both computed the same simulation (Jolt's hash), and the
# range over rounds of the paired ratio (the scene's spread).
# Not run: Ragdoll and RagdollSinglePile (the snapshot has the ragdoll,
# Assets/Human.tof and Assets/Human/, but RagdollScene::Load also reads
# Assets/terrain2.bof, which it lacks: "Unable to load terrain", exit 1),
# LargeMesh (loads nothing, but its Load searches for the largest mesh Jolt
# accepts: over 90 s before the first step) and MaxBodies (Jolt's maximum
# body count: over 90 s for 20 steps at 1 thread). docs/benchmarks-log.md.
#   usage: bench/middleware/jolt_perf.sh BUILD_DIR [ROUNDS] [STEPS]
set -u
B=${1:?usage: jolt_perf.sh BUILD_DIR [ROUNDS] [STEPS]}
rounds=${2:-3}
steps=${3:-500}
J=$B/bench/middleware/jolt_perf_jolt
D=$B/bench/middleware/jolt_perf_dagrt
[ -x "$J" ] && [ -x "$D" ] || { echo "jolt_perf.sh: build $B with -Djolt_src first (no $J)" >&2; exit 2; }
scenes="Pyramid ConvexVsMesh HighSpeed CharacterVirtual"
out=$(mktemp)
trap 'rm -f "$out"' EXIT
for r in $(seq 1 "$rounds"); do
  for s in $scenes; do
    for t in 1 2; do
      if [ $((r % 2)) = 1 ]; then order="jolt dagrt"; else order="dagrt jolt"; fi
      for which in $order; do
        exe=$J; [ "$which" = dagrt ] && exe=$D
        # The app's result line: "Discrete, THREADS, STEPS_PER_SECOND, HASH".
        line=$("$exe" -s="$s" -t="$t" -i="$steps" -q=Discrete 2>&1 | grep -E '^Discrete, ' | tail -n 1)
        echo "$which $s $t ${line:-none}" >> "$out"
      done
    done
  done
done
echo "jolt_perf.sh: $rounds interleaved rounds, $steps steps, Discrete; median steps/s ($(date -u +%F))"
python3 - "$out" <<'PY'
import sys, math, statistics as st
rows = {}
for l in open(sys.argv[1]):
    w, s, t, rest = l.split(' ', 3)
    p = [x.strip() for x in rest.split(',')]
    if len(p) < 4:
        continue
    rows.setdefault((s, int(t)), {}).setdefault(w, []).append((float(p[2]), p[3]))
print(f"{'scene':18} {'threads':>7} {'jolt':>10} {'dagrt':>10} {'dagrt/jolt':>10}  hash  per round dagrt/jolt")
for t in (1, 2):
    lg = []
    for (s, tt), d in sorted(rows.items()):
        if tt != t or 'jolt' not in d or 'dagrt' not in d:
            continue
        mj = st.median(x for x, _ in d['jolt']); md = st.median(x for x, _ in d['dagrt'])
        same = len({h for _, h in d['jolt'] + d['dagrt']}) == 1
        lg.append(math.log(md / mj))
        # Paired by round: the two builds of one round ran back to back.
        pr = [d2 / j2 for (j2, _), (d2, _) in zip(d['jolt'], d['dagrt'])]
        print(f"{s:18} {t:>7} {mj:10.1f} {md:10.1f} {md / mj:10.3f}  {'same' if same else 'DIFFERS'}"
              f"  {min(pr):.3f}-{max(pr):.3f}")
    if lg:
        print(f"{'geomean':18} {t:>7} {'':10} {'':10} {math.exp(sum(lg) / len(lg)):10.3f}")
PY
