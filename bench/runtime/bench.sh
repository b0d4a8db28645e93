#!/usr/bin/env bash
# Runtime benchmarks, side by side: dagrt vs OpenMP vs oneTBB, each against
# the plain loop / serial code measured in the same process. Prints one
# table of medians over RUNS runs of each contender (interleaved).
# usage: bench/runtime/bench.sh [BUILD_DIR] [--quick] [--runs N]
set -u
cd "$(dirname "$0")/../.."
B=build
quick=
runs=3
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) quick=--quick ;;
    --runs) runs=$2; shift ;;
    *) B=$1 ;;
  esac
  shift
done
[ -d "$B" ] || meson setup "$B" >/dev/null
meson compile -C "$B" >/dev/null || exit 1
contenders=()
for c in dagrt omp tbb; do
  [ -x "$B/bench/runtime/bench_rt_$c" ] && contenders+=("$c")
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for r in $(seq 1 "$runs"); do
  for c in "${contenders[@]}"; do
    nice -n 0 "$B/bench/runtime/bench_rt_$c" $quick > "$tmp/$c.$r" 2>"$tmp/$c.$r.err"
  done
done
python3 - "$tmp" "$runs" "${contenders[@]}" <<'PY'
import sys, statistics, glob, os
tmp, runs, cs = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
vals, units = {}, {}
for c in cs:
    for r in range(1, runs + 1):
        for line in open(os.path.join(tmp, f"{c}.{r}")):
            p = line.split()
            if p and p[0] == "RESULT":
                vals.setdefault((p[1], c), []).append(float(p[2]))
                units[p[1]] = p[3]
info = {}
for c in cs:
    for line in open(os.path.join(tmp, f"{c}.1")):
        p = line.split(None, 2)
        if len(p) == 3 and p[0] == "INFO":
            info.setdefault(p[1], {})[c] = p[2].strip()
fib = [r for t in ("1t", "2t", "frames_1t", "frames_2t") for r in (f"fib30_{t}", f"fib30_{t}_ms")]
rows = ["spawn_tree", "spawn_tree_1t_cpu", "fib30_serial"] + fib[:2] + ["fib30_1t_cpu"] + fib[2:] + \
       ["fib30_frames_2t_vs_1t"] + \
       [f"pfor_{k}_{n}" for k in ("0.5ns", "6ns") for n in (1000, 100000, 4000000)] + ["pfor_6ns_1000_floor"] + \
       ["wake_park", "wake_spin", "wake_futex_floor", "wake_futex_same_cpu", "wake_futex_other_cpu"]
target = {"spawn_tree": ">= 100", "fib30_1t": "<= 8 (dagrt_spawn + group wait)", "fib30_1t_cpu": "<= 8 (CPU time, 1 thread)", "fib30_2t": "<= 8 (dagrt_spawn + group wait)",
          "fib30_frames_1t": "<= 8 (dagrt_fork + dagrt_join_take)", "fib30_frames_2t": "<= 8 (dagrt_fork + dagrt_join_take)",
          "fib30_frames_2t_vs_1t": ">= 1.8",
          "fib30_serial": "timed first in each process, before any thread; the same C function",
          "pfor_0.5ns_1000": ">= 0.9", "pfor_0.5ns_100000": ">= 0.9", "pfor_0.5ns_4000000": ">= 0.9",
          "pfor_6ns_1000": ">= 1.6", "pfor_6ns_100000": ">= 1.95", "pfor_6ns_4000000": ">= 0.9",
          "pfor_6ns_1000_floor": "1,000 x 6 ns split with a spinning pthread, no runtime",
          "wake_park": "<= 3 (dagrt)", "wake_futex_floor": "bare futex wake, no runtime",
          "wake_futex_same_cpu": "bare futex, sleeper on the waker's CPU", "wake_futex_other_cpu": "bare futex, sleeper on the other CPU"}
w = max(len(r) for r in rows) + 2
print(f"runtime benchmarks: median of {runs} runs; 2 task-executing threads each; "
      "ratios vs the plain loop / serial code of the same process")
for k in ("build", "wait"):
    for v in sorted(set(info.get(k, {}).values())):
        print(f"{k}: {v} (" + ", ".join(c for c in cs if info[k].get(c) == v) + ")")
print("workload".ljust(w) + "unit".ljust(12) + "".join(c.rjust(10) for c in cs) + "   target")
for r in rows:
    if not any((r, c) in vals for c in cs):
        continue
    cells = "".join((f"{statistics.median(vals[(r, c)]):10.2f}" if (r, c) in vals else "         -") for c in cs)
    print(r.ljust(w) + units.get(r, "").ljust(12) + cells + "   " + target.get(r, ""))
PY
