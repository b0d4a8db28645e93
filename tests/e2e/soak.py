#!/usr/bin/env python3
"""Randomised soak of the whole pipeline: seeded random graphs (random
sizes, gates, and/or clauses, `prev` inputs, on main / hot / fiber /
parallel / when / call) are written as .dag files, compiled by dagc (the real C and the e2e
checker's implementations, see checker/), built against libdagrt and run
for FRAMES frames under the e2e checker (e2e_check.h), which runs them in
every mode: G_run, started instances and pipelines of depth 1 to 4.

usage: soak.py --dagc DAGC --lib LIBDAGRT.a --build-dir DIR [--cc CC]
               [--seed S] [--graphs N] [--frames F] [--keep]
One command, any number of frames: e.g. --graphs 50 --frames 20000."""
import argparse
import os
import random
import re
import shlex
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def expr(rng, names, prevs=()):
    """A random and/or/comma expression over earlier names, and now and then
    `prev X` of any node of the graph (PREVS: every name, itself included)."""
    k = rng.randint(1, min(4, len(names))) if names else 0
    picks = rng.sample(names, k)
    if prevs and (not picks or rng.random() < 0.25):
        picks.insert(rng.randint(0, len(picks)), "prev " + rng.choice(prevs))
    out = picks[0]
    for p in picks[1:]:
        op = rng.choice([" and ", " or ", ", "])
        if rng.random() < 0.2:
            out = "(" + out + ")"
        out += op + p
    return out


def random_graph(rng, gi):
    ntasks = rng.randint(1, 40)
    lines, names = [], []
    # Names for `prev` inputs (to a node itself, an earlier one or a later
    # one: a back edge across frames): every task, known in advance, and the
    # gates made so far.
    ngates = 0
    every = ["t%d" % k for k in range(ntasks)]
    shared_plain = ["shared_%d_%d" % (gi, k) for k in range(2)]
    shared_par = ["shared_par_%d_%d" % (gi, k) for k in range(2)]
    preds = ["pred_%d_%d" % (gi, k) for k in range(3)]
    ntask = 0
    while ntask < ntasks:
        if names and rng.random() < 0.15:
            g = "g%d" % ngates
            ngates += 1
            every.append(g)
            lines.append("    gate %s = %s;" % (g, expr(rng, names, every)))
            names.append(g)
            continue
        t = "t%d" % ntask
        clauses = []
        if rng.random() < 0.8 and (names or rng.random() < 0.3):
            clauses.append("after " + expr(rng, names, every))
        r = rng.random()
        kind = "main" if r < 0.15 else "par" if r < 0.3 else "fiber" if r < 0.4 else "plain"
        if kind == "main":
            clauses.append("on main")
        elif kind == "par":
            clauses.append("parallel" + (" grain %d" % rng.choice([1, 7, 64, 500]) if rng.random() < 0.6 else ""))
            if rng.random() < 0.2:
                clauses.append("hot")
            if rng.random() < 0.2:
                clauses.append("call " + rng.choice(shared_par))
        else:
            if kind == "fiber":
                clauses.append("fiber")
            if rng.random() < 0.2:
                clauses.append("hot")
            if rng.random() < 0.15:
                clauses.append("call " + rng.choice(shared_plain))
        if rng.random() < 0.2:
            clauses.append("when " + rng.choice(preds))
        rng.shuffle(clauses)
        lines.append("    task %s%s;" % (t, "".join(" " + c for c in clauses)))
        names.append(t)
        ntask += 1
    # A function shared by several tasks (`call`) cannot tell the checker
    # which task called it, so only tasks nothing waits for share one; the
    # others get a `call` name of their own.
    referenced = set()
    for ln in lines:
        for m in re.finditer(r"(?:after|=)\s*([^;]*?)(?=\s+(?:on|hot|fiber|parallel|call|when|grain)\b|;)", ln):
            referenced.update(re.findall(r"\b[tg]\d+\b", m.group(1)))
    for k, ln in enumerate(lines):
        m = re.match(r"    task (t\d+)", ln)
        if m and m.group(1) in referenced:
            lines[k] = re.sub(r"call shared_(par_)?\d+_\d+", lambda c: "call own_%d_%s" % (gi, m.group(1)), ln)
    if rng.random() < 0.3:
        rng.shuffle(lines)  # names may be used before they are declared
    return "graph soak%d {\n%s\n}\n" % (gi, "\n".join(lines))


def run(cmd, **kw):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, **kw)
    if p.returncode != 0:
        sys.stderr.write("$ %s\n%s\n" % (" ".join(cmd), p.stdout))
    return p.returncode


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dagc", required=True)
    ap.add_argument("--lib", required=True, help="libdagrt.a")
    ap.add_argument("--link", action="append", default=[], help="a system library libdagrt.a needs (-luring)")
    ap.add_argument("--cc", default=os.environ.get("CC", "cc"))   # a command line: "ccache cc" too
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--graphs", type=int, default=3, help="random .dag files (one graph each)")
    ap.add_argument("--frames", type=int, default=200)
    ap.add_argument("--keep", action="store_true", help="keep the work directory")
    a = ap.parse_args()
    work = tempfile.mkdtemp(prefix="dagc-soak-")
    failed = 0
    try:
        for gi in range(a.graphs):
            seed = a.seed * 1000003 + gi
            rng = random.Random(seed)
            dag = os.path.join(work, "soak%d.dag" % gi)
            with open(dag, "w") as f:
                f.write("// soak.py --seed %d, graph %d\n" % (a.seed, gi))
                f.write(random_graph(rng, gi))
            stem = os.path.join(work, "soak%d" % gi)
            if (run([a.dagc, dag, "--c", stem + ".c", "--h", stem + ".h"]) or
                    run([a.dagc, dag, "--templates", os.path.join(HERE, "checker"),
                         "--c", stem + "_check.c", "--h", stem + "_check.h"])):
                print("soak: seed %d graph %d: dagc failed (%s kept)" % (a.seed, gi, dag))
                a.keep = True
                failed += 1
                continue
            exe = stem + "_run"
            if run([*shlex.split(a.cc), "-std=c11", "-O1", "-g", "-Wall", "-Wextra", "-Wpedantic", "-Werror",
                    "-DE2E_REAL_HEADER=\"soak%d.h\"" % gi, "-I", work, "-I", HERE,
                    "-I", os.path.join(ROOT, "runtime", "include"),
                    stem + ".c", stem + "_check.c", os.path.join(HERE, "e2e_check.c"), os.path.join(HERE, "e2e_drive.c"),
                    os.path.join(HERE, "e2e_plain.c"), a.lib, *a.link, "-lpthread", "-o", exe]):
                a.keep = True
                failed += 1
                continue
            env = dict(os.environ, DAGC_E2E_FRAMES=str(a.frames))
            p = subprocess.run([exe], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                               env=env, timeout=600)
            status = "ok" if p.returncode == 0 else "FAILED"
            print("soak: seed %d graph %d (%d frames x 3 runtimes): %s" % (a.seed, gi, a.frames, status))
            if p.returncode != 0:
                sys.stdout.write(p.stdout)
                a.keep = True
                failed += 1
    finally:
        if a.keep:
            print("soak: work directory kept: " + work)
        else:
            shutil.rmtree(work, ignore_errors=True)
    print("soak: %d of %d graphs failed" % (failed, a.graphs))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
