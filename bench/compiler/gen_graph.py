#!/usr/bin/env python3
"""Writes a seeded random layered .dag graph with N nodes to stdout.

usage: gen_graph.py N [SEED]

Shape: levels of about sqrt(N) nodes; each task waits for 1 to 3 nodes of
the previous two levels (joined with `,`, sometimes `or`); every 16th node is
a named gate; about a third of the tasks carry a cost. Dependencies are
written to nodes declared later as often as earlier (forward references).
"""
import math
import random
import sys


def main():
    n = int(sys.argv[1])
    rnd = random.Random(int(sys.argv[2]) if len(sys.argv) > 2 else 1)
    width = max(2, int(math.sqrt(n)))
    levels = []
    names = []
    for i in range(n):
        if not levels or len(levels[-1]) >= width:
            levels.append([])
        kind = "gate" if i % 16 == 15 and len(levels) > 1 else "task"
        name = f"n{i}"
        levels[-1].append((name, kind))
        names.append((name, kind, len(levels) - 1))
    out = [f"// generated: {n} nodes, seed {sys.argv[2] if len(sys.argv) > 2 else 1}",
           "graph big(struct world *) {"]
    order = list(range(n))
    rnd.shuffle(order)
    for i in order:
        name, kind, lv = names[i]
        preds = []
        if lv > 0:
            pool = levels[lv - 1] + (levels[lv - 2] if lv > 1 else [])
            k = rnd.randint(1, min(3, len(pool)))
            preds = [p[0] for p in rnd.sample(pool, k)]
        if kind == "gate":
            out.append(f"    gate {name} = {' and '.join(preds)};")
            continue
        line = f"    task {name}"
        if preds:
            sep = " or " if len(preds) > 1 and rnd.random() < 0.1 else ", "
            line += " after " + sep.join(preds)
        r = rnd.random()
        if r < 0.05:
            line += " hot"
        elif r < 0.08:
            line += " parallel grain 64"
        if rnd.random() < 0.33:
            line += f" cost {rnd.randint(1, 999)}us"
        out.append(line + ";")
    out.append("}")
    sys.stdout.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
