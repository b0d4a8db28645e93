#!/usr/bin/env python3
"""Writes a seeded random .dag graph to stdout, for bench/compiler/run.sh.

usage: gen_graph.py N [SEED] [--resources R [--accessors A]] [--chain] [--fan]
                   [--layers [--width W]] [--dangling K [--prefix P]]

Default shape: N nodes in levels of about sqrt(N) nodes; each task waits for
1 to 3 nodes of the previous two levels (joined with `,`, sometimes `or`);
every 16th node is a named gate; about a third of the tasks carry a cost.
Dependencies are written to nodes declared later as often as earlier
(forward references).

--resources R (language v2): the same layered graph without `or` joins, and
R resources with A accessors each (default 8), race-free by construction, so
dagc must exit 0. Half of the resources are shared along one dependency
path: A tasks on a path through the graph (each ordered after the one
before), the first one writing, each other one writing or reading. The
other half are only read, by A tasks anywhere (readers never race).

--chain (language v2): N tasks in one chain, every one writing the same
resource, so every pair of the N tasks is an access pair the race check
must find ordered.

--fan (language v2): one task writing a resource and N-1 tasks after it
reading it (a fan-out): race-free within a frame; across frames each reader
of frame N races with the next frame's writer.

--layers (language v2): one resource through a layered graph: a writer, W
readers after it (default W = sqrt(N)), the next writer after all of them,
W readers after that one, and so on: race-free within a frame (the writers
form a chain and every reader sits between two of them); across frames
every later accessor of frame N races with every earlier one of frame N+1
that it is not a reader pair with.

--dangling K (issue 36, "did you mean" at scale): N tasks whose names share
a prefix of P characters (default 56) and end in 7 of their own (P + 7
characters), each after the one before, then K tasks each after a name that
does not exist: the name of task (j+1)*N/(K+1) with an 'x' added, one edit
from it and at least two from every other. dagc must report K errors
"unknown name 'NAMEx'; did you mean 'NAME'?" (the first line of each
probe's comment says which, in order) and exit 1. Before issue 36 each
of them compared every name in full (64 x 64 cells): 100,000 names with 20
such references took 40 s.
"""
import argparse
import math
import random
import sys


def layered(n, rnd, allow_or):
    """The default shape: (names, preds, is_gate, separator) per node."""
    width = max(2, int(math.sqrt(n)))
    levels = []
    nodes = []
    for i in range(n):
        if not levels or len(levels[-1]) >= width:
            levels.append([])
        kind = "gate" if i % 16 == 15 and len(levels) > 1 else "task"
        levels[-1].append(i)
        nodes.append({"name": f"n{i}", "kind": kind, "level": len(levels) - 1})
    for nd in nodes:
        lv = nd["level"]
        nd["preds"] = []
        nd["sep"] = ", "
        if lv > 0:
            pool = levels[lv - 1] + (levels[lv - 2] if lv > 1 else [])
            k = rnd.randint(1, min(3, len(pool)))
            nd["preds"] = rnd.sample(pool, k)
            if allow_or and nd["kind"] == "task" and k > 1 and rnd.random() < 0.1:
                nd["sep"] = " or "
    return nodes


def add_resources(nodes, rnd, nres, acc):
    """Race-free accesses: nodes[i]["reads"/"writes"] sets of resource names."""
    succs = [[] for _ in nodes]
    for i, nd in enumerate(nodes):
        nd["reads"], nd["writes"] = set(), set()
        for p in nd["preds"]:
            succs[p].append(i)
    tasks = [i for i, nd in enumerate(nodes) if nd["kind"] == "task"]
    n = len(nodes)
    for r in range(nres):
        res = f"R{r}"
        if r % 2 == 1:                       # readers anywhere
            for i in rnd.sample(tasks, min(acc, len(tasks))):
                nodes[i]["reads"].add(res)
            continue
        for _attempt in range(1000):         # a path with acc tasks on it
            i = rnd.randrange(n // 2)
            path = [i] if nodes[i]["kind"] == "task" else []
            while len(path) < acc and succs[i]:
                i = rnd.choice(succs[i])     # i waits for the node before (AND)
                if nodes[i]["kind"] == "task":
                    path.append(i)
            if len(path) == acc:
                break
        else:
            sys.exit(f"gen_graph.py: no path of {acc} tasks found; try a larger N")
        for j, i in enumerate(path):
            if j == 0 or rnd.random() < 0.5:
                nodes[i]["writes"].add(res)
            else:
                nodes[i]["reads"].add(res)
    for nd in nodes:
        nd["reads"] -= nd["writes"]          # `writes` includes reading


def resource_decls(names):
    out = []
    for k in range(0, len(names), 16):
        out.append("resource " + ", ".join(names[k:k + 16]) + ";")
    return out


def sort_key(name):
    return int(name[1:])


def write_layered(args, rnd):
    v2 = args.resources > 0
    nodes = layered(args.n, rnd, allow_or=not v2)
    out = [f"// generated: {args.n} nodes, seed {args.seed}"
           + (f", {args.resources} resources x {args.accessors} accessors" if v2 else "")]
    if v2:
        add_resources(nodes, rnd, args.resources, args.accessors)
        out += resource_decls([f"R{r}" for r in range(args.resources)])
    out.append("graph big(struct world *) {")
    order = list(range(len(nodes)))
    rnd.shuffle(order)
    for i in order:
        nd = nodes[i]
        preds = [nodes[p]["name"] for p in nd["preds"]]
        if nd["kind"] == "gate":
            out.append(f"    gate {nd['name']} = {' and '.join(preds)};")
            continue
        line = f"    task {nd['name']}"
        if preds:
            line += " after " + nd["sep"].join(preds)
        r = rnd.random()
        if r < 0.05:
            line += " hot"
        elif r < 0.08:
            line += " parallel grain 64"
        if rnd.random() < 0.33:
            line += f" cost {rnd.randint(1, 999)}us"
        if v2 and nd["reads"]:
            line += " reads " + ", ".join(sorted(nd["reads"], key=sort_key))
        if v2 and nd["writes"]:
            line += " writes " + ", ".join(sorted(nd["writes"], key=sort_key))
        out.append(line + ";")
    out.append("}")
    return out


def write_chain(args, rnd):
    out = [f"// generated: a chain of {args.n} tasks writing one resource, seed {args.seed}",
           "resource shared;",
           "graph chain(struct world *) {"]
    order = list(range(args.n))
    rnd.shuffle(order)
    for i in order:
        after = f" after t{i - 1}" if i > 0 else ""
        out.append(f"    task t{i}{after} writes shared;")
    out.append("}")
    return out


def write_fan(args, rnd):
    out = [f"// generated: one writer and {args.n - 1} readers after it, seed {args.seed}",
           "resource shared;",
           "graph fan(struct world *) {"]
    order = list(range(args.n))
    rnd.shuffle(order)
    for i in order:
        out.append("    task t0 writes shared;" if i == 0 else f"    task t{i} after t0 reads shared;")
    out.append("}")
    return out


def write_layers(args, rnd):
    width = args.width or max(1, int(math.sqrt(args.n)))
    nodes = []      # (name, preds, writes)
    prev_level = []
    i = 0
    while i < args.n:
        w = f"w{i}"
        nodes.append((w, prev_level, True))
        i += 1
        prev_level = []
        for _ in range(min(width, args.n - i)):
            prev_level.append(f"r{i}")
            nodes.append((f"r{i}", [w], False))
            i += 1
        if not prev_level:
            prev_level = [w]
    out = [f"// generated: {args.n} nodes, writers joining levels of {width} readers, seed {args.seed}",
           "resource shared;",
           "graph layers(struct world *) {"]
    rnd.shuffle(nodes)
    for name, preds, writes in nodes:
        after = f" after {', '.join(preds)}" if preds else ""
        out.append(f"    task {name}{after} {'writes' if writes else 'reads'} shared;")
    out.append("}")
    return out


def dangling_name(prefix, i):
    return f"{prefix}t{i:06d}"


def dangling_refs(n, k, plen):
    """(probe name, written name, expected suggestion) for --dangling."""
    prefix = ("shared_prefix_" * 8)[:plen]
    refs = []
    for j in range(k):
        target = dangling_name(prefix, (j + 1) * n // (k + 1))
        refs.append((f"probe{j}", target + "x", target))
    return prefix, refs


def write_dangling(args, rnd):
    prefix, refs = dangling_refs(args.n, args.dangling, args.prefix)
    out = [f"// generated: {args.n} tasks sharing a {args.prefix}-character prefix, "
           f"{args.dangling} references to names that do not exist, seed {args.seed}",
           "graph names {"]
    for i in range(args.n):
        after = f" after {dangling_name(prefix, i - 1)}" if i % 2 else ""
        out.append(f"    task {dangling_name(prefix, i)}{after};")
    for probe, written, _ in refs:
        out.append(f"    task {probe} after {written};")
    out.append("}")
    return out


def main():
    ap = argparse.ArgumentParser(description="Writes a seeded random .dag graph to stdout.")
    ap.add_argument("n", type=int, help="number of nodes")
    ap.add_argument("seed", type=int, nargs="?", default=1)
    ap.add_argument("--resources", type=int, default=0, metavar="R",
                    help="R resources, race-free accesses (language v2)")
    ap.add_argument("--accessors", type=int, default=8, metavar="A",
                    help="accessing tasks per resource (default 8)")
    ap.add_argument("--chain", action="store_true",
                    help="N tasks in one chain, all writing one resource (language v2)")
    ap.add_argument("--fan", action="store_true",
                    help="one writer of a resource and N-1 readers after it (language v2)")
    ap.add_argument("--layers", action="store_true",
                    help="writers of one resource joining levels of readers (language v2)")
    ap.add_argument("--width", type=int, default=0, metavar="W",
                    help="with --layers: readers per level (default sqrt(N))")
    ap.add_argument("--dangling", type=int, default=0, metavar="K",
                    help="N tasks with one long shared prefix, K references to missing names")
    ap.add_argument("--prefix", type=int, default=56, metavar="P",
                    help="with --dangling: the shared prefix's length (default 56)")
    args = ap.parse_args()
    if args.n < 1 or args.resources < 0 or args.accessors < 1:
        ap.error("N and A must be positive, R not negative")
    rnd = random.Random(args.seed)
    if args.chain:
        out = write_chain(args, rnd)
    elif args.fan:
        out = write_fan(args, rnd)
    elif args.layers:
        out = write_layers(args, rnd)
    elif args.dangling:
        out = write_dangling(args, rnd)
    else:
        out = write_layered(args, rnd)
    sys.stdout.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
