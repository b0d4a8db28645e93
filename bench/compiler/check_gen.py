#!/usr/bin/env python3
"""Checks bench/compiler/gen_graph.py (a test, suite unit).

The race-check workloads are only worth timing if they are what they claim:
race-free graphs with R resources of A accessors each, and a chain in which
every task writes one resource. This script generates small ones and checks
them with a brute-force ancestor search written apart from the generator
(two tasks that access a resource, one of them writing, must be one the
other's ancestor), including a negative control: one unordered writer
added must be found. If a DAGC is given, it must accept the default shape
(exit 0), and the v2 workloads too when it accepts `resource` at all.

usage: check_gen.py [DAGC]
"""
import itertools
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
GEN = os.path.join(HERE, "gen_graph.py")
NODE = re.compile(r"^\s*(task|gate) (\w+)(.*);$")
CLAUSE = re.compile(r"\b(after|reads|writes) ((?:\w+)(?:, \w+)*)")


def gen(*args):
    return subprocess.run([sys.executable, GEN, *map(str, args)], capture_output=True,
                          text=True, check=True).stdout


def parse(text):
    """preds: node -> its inputs; acc: resource -> [(task, 'reads'|'writes')]."""
    preds, acc = {}, {}
    for line in text.splitlines():
        m = NODE.match(line)
        if not m:
            continue
        kind, name, rest = m.groups()
        if " or " in rest:
            raise SystemExit(f"an `or` join in a race workload: {line.strip()}")
        if kind == "gate":
            preds[name] = rest.split("=", 1)[1].replace(" and ", ",").replace(" ", "").split(",")
            continue
        preds[name] = []
        for word, names in CLAUSE.findall(rest):
            names = names.split(", ")
            if word == "after":
                preds[name] = names
            else:
                for r in names:
                    acc.setdefault(r, []).append((name, word))
    return preds, acc


def races(preds, acc):
    anc = {}

    def ancestors(n):
        if n not in anc:
            s = set()
            stack = list(preds[n])
            while stack:
                p = stack.pop()
                if p not in s:
                    s.add(p)
                    stack.extend(preds[p])
            anc[n] = s
        return anc[n]

    found = 0
    for lst in acc.values():
        for (a, ka), (b, kb) in itertools.combinations(lst, 2):
            if "writes" in (ka, kb) and a not in ancestors(b) and b not in ancestors(a):
                found += 1
    return found


def dagc_ok(dagc, text, tmp):
    path = os.path.join(tmp, "g.dag")
    with open(path, "w") as f:
        f.write(text)
    r = subprocess.run([dagc, "--check", path], capture_output=True, text=True)
    return r.returncode, (r.stderr.strip().splitlines() or [""])[0]


def main():
    bad = 0

    def check(cond, what):
        nonlocal bad
        print(("ok   " if cond else "FAIL ") + what)
        bad += not cond

    text = gen(3000, 3, "--resources", 60, "--accessors", 8)
    preds, acc = parse(text)
    check(len(acc) == 60 and all(len(v) == 8 for v in acc.values()),
          f"60 resources with 8 accessors each ({len(acc)} found)")
    check(races(preds, acc) == 0, "the resource workload is race-free")
    text_bad = text.replace("\n}\n", "\n    task extra_writer writes R0;\n}\n")
    p2, a2 = parse(text_bad)
    check(races(p2, a2) == 8, "negative control: an unordered writer of R0 races with its 8 accessors")
    chain = gen(200, 1, "--chain")
    pc, ac = parse(chain)
    check(len(ac.get("shared", [])) == 200 and races(pc, ac) == 0,
          "the chain: 200 writers of one resource, all ordered")
    pc["t100"] = []   # cut the chain: t100 no longer waits for t99
    check(races(pc, ac) == 100 * 100, "negative control: a cut chain races across the cut")
    fan = gen(300, 1, "--fan")
    pf, af = parse(fan)
    check(len(af.get("shared", [])) == 300 and sum(k == "writes" for _, k in af["shared"]) == 1
          and races(pf, af) == 0, "the fan-out: one writer, 299 readers after it")
    layers = gen(300, 1, "--layers", "--width", 7)
    pl, al = parse(layers)
    check(len(al.get("shared", [])) == 300 and sum(k == "writes" for _, k in al["shared"]) == 38
          and races(pl, al) == 0, "the layers: 38 writers joining levels of 7 readers, all ordered")
    pl["r2"] = []     # r2 no longer waits for the writer before it
    check(races(pl, al) == 1, "negative control: a reader cut from its writer races with it")

    if len(sys.argv) > 1:
        dagc = sys.argv[1]
        with tempfile.TemporaryDirectory() as tmp:
            rc, msg = dagc_ok(dagc, gen(2000, 1), tmp)
            check(rc == 0, f"dagc --check accepts the default shape ({msg or rc})")
            rc, msg = dagc_ok(dagc, "resource r;\ngraph g {\n    task a writes r;\n}\n", tmp)
            if rc != 0:
                print(f"skip dagc on the v2 workloads: it rejects `resource` ({msg})")
            else:
                for what, t in (("resources", text), ("chain", chain), ("fan-out", fan),
                                ("layers", layers)):
                    rc, msg = dagc_ok(dagc, t, tmp)
                    check(rc == 0, f"dagc --check finds no race in the {what} workload ({msg or rc})")
                rc, msg = dagc_ok(dagc, text_bad, tmp)
                check(rc == 1, f"dagc --check reports the negative control's race ({msg or rc})")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
