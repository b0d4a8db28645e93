#!/usr/bin/env bash
# Times dagc on generated graphs of 1k, 10k and 100k nodes: --check alone,
# and --dot (check + DOT). Prints the median wall time, CPU time (user +
# system: steadier than wall time on a shared machine) and peak RSS of REPS
# runs per size (default 5). usage: bench/compiler/run.sh [DAGC] [REPS]
set -eu
cd "$(dirname "$0")/../.."
DAGC=${1:-build/dagc/dagc}
REPS=${2:-5}
[ -x "$DAGC" ] || { echo "no dagc at $DAGC (build first: meson setup build && meson compile -C build)" >&2; exit 2; }
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
median() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
printf '%-8s %-7s %8s %8s %9s %12s\n' nodes mode "wall s" "cpu s" "peak MiB" "cpu ns/node"
for n in 1000 10000 100000; do
  python3 bench/compiler/gen_graph.py "$n" 1 > "$TMP/g$n.dag"
  for mode in check dot; do
    : > "$TMP/t"; : > "$TMP/c"; : > "$TMP/m"
    for _ in $(seq "$REPS"); do
      if [ "$mode" = check ]; then args=(--check); else args=(--dot "$TMP/out.dot"); fi
      /usr/bin/time -f '%e %U %S %M' -o "$TMP/one" "$DAGC" "${args[@]}" "$TMP/g$n.dag" 2>/dev/null >/dev/null || true
      read -r t u s m < "$TMP/one"
      echo "$t" >> "$TMP/t"; echo "$u $s" | awk '{print $1+$2}' >> "$TMP/c"; echo "$m" >> "$TMP/m"
    done
    t=$(median < "$TMP/t"); c=$(median < "$TMP/c"); m=$(median < "$TMP/m")
    awk -v n="$n" -v mode="$mode" -v t="$t" -v c="$c" -v m="$m" \
      'BEGIN { printf "%-8d %-7s %8.3f %8.3f %9.1f %12.0f\n", n, mode, t, c, m/1024, c*1e9/n }'
  done
done
