#!/usr/bin/env python3
"""Randomised soak of the whole pipeline: seeded random graphs (random
sizes, gates, and/or clauses, `prev` inputs, on main / hot / fiber /
parallel / when / call, `run` nodes of subgraphs in imported files, nested)
are written as .dag files, compiled by dagc (the real C and the e2e
checker's implementations, see checker/), built against libdagrt and run
for FRAMES frames under the e2e checker (e2e_check.h), which runs them in
every mode: G_run, started instances and pipelines of depth 1 to 4, on
each runtime of --configs (0, 1 and 3 workers, with and without a hot
worker), once per executor (DAGRT_PIPE unset: plan mode; dynamic; and a crowded process,
DAGRT_CROWDED=1).
Fiber tasks (and a few others) wait in their bodies, each wait named in the
task's name (t3_sleep, t5_udp, t7_cw0: tests/e2e/e2e_wait.c): sleeps, timed
and untimed event, semaphore, mutex and condition waits, a UDP socket on
127.0.0.1, a file read, cancel scopes; every result is checked. A frame
that never ends fails the run (the checker's watchdog: --watchdog).

usage: soak.py --dagc DAGC --lib LIBDAGRT.a [--cc CC] [--seed S] [--graphs N]
               [--first G] [--frames F] [--dag FILE]... [--stop-at-first] [--keep]
One command, any number of frames: e.g. --graphs 50 --frames 20000.
A failure prints the command that reruns its graph alone."""
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
# The scenario host (the plain driver) that runs the checker, as in the build.
SCENARIO = os.path.join(ROOT, "tests", "scenario")


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


# The waits a fiber task's name may ask for (tests/e2e/e2e_wait.c: the
# part after the name's last underscore). cw/xw are a pair's waiters (a
# condition variable, a cancel scope), cs/xc their other ends, which any
# task may be.
WAITS = ["sleep", "sleep3", "evto", "semto", "mtxto", "condto", "ev", "sem", "mtx",
         "pollto", "udp", "read", "xself", "cw", "xw"]
PAIR_ENDS = ["cs", "xc"]
NPAIRS = 2


def random_graph(rng, name, opts, subs=(), small=False):
    """One graph NAME: tasks and gates, and run nodes of the graphs SUBS."""
    ntasks = rng.randint(1, 12 if small else 40)
    lines, names = [], []
    # Names for `prev` inputs (to a node itself, an earlier one or a later
    # one: a back edge across frames): every task, known in advance, and the
    # gates made so far. A task's name is t<k>, with a wait (_sleep, _cw0)
    # for some.
    ngates = 0
    tnames = []
    for k in range(ntasks):
        tnames.append("t%d" % k)
    shared_plain = ["shared_%s_%d" % (name, k) for k in range(2)]
    shared_par = ["shared_par_%s_%d" % (name, k) for k in range(2)]
    preds = ["pred_%s_%d" % (name, k) for k in range(3)]
    # Each task's kind and name first, so that `prev` may name any of them.
    # Each subgraph is run once at most: its tasks' functions are those of
    # the subgraph, and two copies would share them, which the checker
    # cannot tell apart (a call is claimed by any ready task of the
    # function, so a task after one copy could seem to start too early).
    kinds, runs, unused = [], {}, list(subs)
    for k in range(ntasks):
        if unused and rng.random() < opts.run_share:
            kinds.append("run")
            tnames[k] = "r%d" % k
            runs[k] = unused.pop(rng.randrange(len(unused)))
            continue
        r = rng.random()
        kind = ("main" if r < 0.15 else "par" if r < 0.3 else
                "fiber" if r < 0.3 + opts.fiber_share else "plain")
        kinds.append(kind)
        wait = None
        if kind == "fiber" and rng.random() < opts.waits:
            wait = rng.choice(WAITS)
        elif kind != "par" and rng.random() < opts.plain_waits:
            wait = rng.choice(WAITS)
        elif kind != "par" and rng.random() < opts.waits * 0.2:
            wait = rng.choice(PAIR_ENDS)
        if wait in ("cw", "xw", "cs", "xc"):
            wait += str(rng.randrange(NPAIRS))
        if wait:
            tnames[k] += "_" + wait
    every = [t for t in tnames]
    ntask = 0
    while ntask < ntasks:
        if names and rng.random() < 0.15:
            g = "g%d" % ngates
            ngates += 1
            every.append(g)
            lines.append("    gate %s = %s;" % (g, expr(rng, names, every)))
            names.append(g)
            continue
        t = tnames[ntask]
        kind = kinds[ntask]
        waits = "_" in t
        clauses = []
        if rng.random() < 0.8 and (names or rng.random() < 0.3):
            clauses.append("after " + expr(rng, names, every))
        if kind == "run":
            clauses.append("run " + runs[ntask])
        elif kind == "main":
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
            # A function shared by tasks (`call`) cannot tell which task
            # called it: not for a task whose name asks for a wait.
            if rng.random() < 0.15 and not waits:
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
    node = r"\b[tgr]\d+(?:_[a-z]+\d*)?\b"
    for ln in lines:
        for m in re.finditer(r"(?:after|=)\s*([^;]*?)(?=\s+(?:on|hot|fiber|parallel|call|when|grain|run)\b|;)", ln):
            referenced.update(re.findall(node, m.group(1)))
    for k, ln in enumerate(lines):
        m = re.match(r"    task (t\d+(?:_[a-z]+\d*)?)", ln)
        if m and m.group(1) in referenced:
            lines[k] = re.sub(r"call shared_(par_)?%s_\d+" % name,
                              lambda c: "call own_%s_%s" % (name, m.group(1)), ln)
    if rng.random() < 0.3:
        rng.shuffle(lines)  # names may be used before they are declared
    return "graph %s {\n%s\n}\n" % (name, "\n".join(lines))


def write_graphs(rng, work, gi, opts):
    """The files of random graph GI: soak<gi>.dag, whose graph may run
    subgraphs written in files of their own (soak<gi>s<j>.dag, imported;
    sub j may run sub j-1). Returns the top file's path."""
    nsubs = rng.choice([0, 1, 1, 2, 3]) if opts.subgraphs else 0
    subs = []   # the subgraphs no other subgraph runs
    for j in range(nsubs):
        sub = "soak%ds%d" % (gi, j)
        inner = subs[-1:] if subs and rng.random() < 0.4 else []
        if inner:
            subs.remove(inner[0])   # one run of it at most, here
        with open(os.path.join(work, sub + ".dag"), "w") as f:
            f.write("// soak.py --seed %d, graph %d, subgraph %d\n" % (opts.seed, gi, j))
            for s in inner:
                f.write('import "%s.dag";\n' % s)
            f.write(random_graph(rng, sub, opts, inner, small=True))
        subs.append(sub)
    dag = os.path.join(work, "soak%d.dag" % gi)
    with open(dag, "w") as f:
        f.write("// soak.py --seed %d, graph %d\n" % (opts.seed, gi))
        for s in subs:
            f.write('import "%s.dag";\n' % s)
        f.write(random_graph(rng, "soak%d" % gi, opts, subs))
    return dag


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
    ap.add_argument("--graphs", type=int, default=3, help="random graphs (a .dag file each, and its subgraphs' files)")
    ap.add_argument("--first", type=int, default=0, help="the first graph's index (to rerun one: --first G --graphs 1)")
    ap.add_argument("--frames", type=int, default=200)
    ap.add_argument("--dag", action="append", default=[],
                    help="run this .dag file (its graphs) instead of random ones; repeatable")
    ap.add_argument("--fiber-share", type=float, default=0.1, help="share of tasks that are fiber tasks")
    ap.add_argument("--waits", type=float, default=0.7, help="share of fiber tasks that wait (by name)")
    ap.add_argument("--plain-waits", type=float, default=0.03, help="share of other tasks that wait")
    ap.add_argument("--run-share", type=float, default=0.12, help="share of nodes that run a subgraph")
    ap.add_argument("--no-subgraphs", dest="subgraphs", action="store_false")
    ap.add_argument("--pipe", action="append", default=None, choices=["plan", "dynamic", "crowded"],
                    help="executors: plan (DAGRT_PIPE unset), dynamic (DAGRT_PIPE=dynamic), crowded "
                         "(DAGRT_CROWDED=1: tiny frames in plan mode, a pipeline's one at a time, "
                         "the rest dynamic); default all three")
    ap.add_argument("--configs", default="0,1,1h,3,3h",
                    help="runtimes (DAGC_E2E_CONFIGS: worker counts, h for a hot worker)")
    ap.add_argument("--watchdog", type=int, default=30,
                    help="seconds without a frame beginning or ending before a run fails as hung")
    ap.add_argument("--stop-at-first", action="store_true", help="stop at the first failing graph")
    ap.add_argument("--keep", action="store_true", help="keep the work directory")
    a = ap.parse_args()
    pipes = a.pipe or ["plan", "dynamic", "crowded"]
    work = tempfile.mkdtemp(prefix="dagc-soak-")
    failed = runs = 0
    first_bad = None
    items = ([(k, os.path.abspath(d)) for k, d in enumerate(a.dag)] if a.dag
             else [(gi, None) for gi in range(a.first, a.first + a.graphs)])
    try:
        for gi, given in items:
            if given:
                dag = given
                origin = "soak.py --dag %s" % given
                stem = os.path.join(work, "given%d" % gi)
                header = os.path.basename(stem) + ".h"
            else:
                rng = random.Random(a.seed * 1000003 + gi)
                dag = write_graphs(rng, work, gi, a)
                origin = "soak.py --seed %d --first %d --graphs 1" % (a.seed, gi)
                stem = os.path.join(work, "soak%d" % gi)
                header = "soak%d.h" % gi
            if (run([a.dagc, dag, "--c", stem + ".c", "--h", stem + ".h"]) or
                    run([a.dagc, dag, "--templates", os.path.join(HERE, "checker"),
                         "--c", stem + "_check.c", "--h", stem + "_check.h"])):
                print("soak: %s: dagc failed (%s kept)" % (origin, dag))
                a.keep = True
                failed += 1
                continue
            exe = stem + "_run"
            if run([*shlex.split(a.cc), "-std=c11", "-O1", "-g", "-Wall", "-Wextra", "-Wpedantic", "-Werror",
                    "-DE2E_REAL_HEADER=\"%s\"" % header, "-I", work, "-I", HERE,
                    "-I", os.path.dirname(dag), "-I", os.path.join(ROOT, "runtime", "include"),
                    "-I", SCENARIO,
                    stem + ".c", stem + "_check.c", *[os.path.join(HERE, f) for f in
                                                     ("e2e_check.c", "e2e_drive.c", "e2e_wait.c", "e2e_table.c")],
                    os.path.join(SCENARIO, "driver.c"), os.path.join(SCENARIO, "scenario.c"),
                    a.lib, *a.link, "-lpthread", "-o", exe]):
                a.keep = True
                failed += 1
                continue
            bad = False
            for pipe in pipes:
                env = dict(os.environ, DAGC_E2E_FRAMES=str(a.frames), DAGC_E2E_CONFIGS=a.configs,
                           DAGC_E2E_WATCHDOG=str(a.watchdog),
                           DAGC_E2E_ORIGIN="%s, %s" % (origin, os.path.basename(dag)))
                env.pop("DAGRT_PIPE", None)
                env.pop("DAGRT_CROWDED", None)
                if pipe == "dynamic":
                    env["DAGRT_PIPE"] = "dynamic"
                elif pipe == "crowded":
                    env["DAGRT_CROWDED"] = "1"
                runs += 1
                try:
                    p = subprocess.run([exe], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                       env=env, timeout=max(600, 4 * a.watchdog))
                    rc, out = p.returncode, p.stdout
                except subprocess.TimeoutExpired as e:
                    rc = -1
                    out = (e.stdout or b"").decode(errors="replace") if isinstance(e.stdout, bytes) else (e.stdout or "")
                    out += "soak: killed after %d s (the watchdog did not fire)\n" % max(600, 4 * a.watchdog)
                status = "ok" if rc == 0 else "HUNG (watchdog)" if rc == 3 else "FAILED (status %d)" % rc
                print("soak: %s (%s, %d frames, runtimes %s, DAGRT_PIPE=%s%s): %s" % (
                    origin, os.path.basename(dag), a.frames, a.configs,
                    "dynamic" if pipe == "dynamic" else "(unset)",
                    ", DAGRT_CROWDED=1" if pipe == "crowded" else "", status), flush=True)
                if rc != 0:
                    sys.stdout.write(out)
                    a.keep = True
                    bad = True
            if bad:
                failed += 1
                if first_bad is None:
                    first_bad = (gi, len([1 for g, _ in items if g <= gi]))
                if a.stop_at_first:
                    break
    finally:
        if a.keep:
            print("soak: work directory kept: " + work)
        else:
            shutil.rmtree(work, ignore_errors=True)
    done = len([1 for g, _ in items if first_bad is None or not a.stop_at_first or g <= first_bad[0]])
    print("soak: %d of %d graphs failed (%d runs)" % (failed, done, runs))
    if first_bad is not None:
        print("soak: first failure: graph %d (the %d. graph run)" % first_bad)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
