#!/usr/bin/env python3
"""The Tracy integration end to end (docs/runtime.md, "In Tracy").

tracy_frame (tracy_main.c: libdagrt with integrations/tracy and Tracy's
client) runs while tracy-capture records it over localhost; tracy-csvexport
reads the capture back (zones, messages, plots) and dagrt-tracy-read
(integrations/tracy/tools: Tracy's own server library) what csvexport does
not print (frame sets, fiber tracks, zones left open). Checks: the frame
count of each frame set, a zone per node per frame (fiber slices and
parallel chunks at least one), fiber switches on the fiber task's track,
no zone left open, the load plots and the run policy's messages.

usage: tracy_e2e.py PROGRAM TOOLS_DIR   (exit 77: skipped, with why)
"""
import csv
import io
import os
import re
import socket
import subprocess
import sys
import tempfile

SYNC, PIPED = 20, 20
GRAPH = "tracy_frame"
NODES = {"input": "on main", "net": "fiber", "ai": "hot", "physics": "task",
         "particles": "parallel chunk", "render": "on main"}


def fail(msg):
    print("tracy_e2e: FAIL: " + msg)
    sys.exit(1)


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main():
    prog, tools = sys.argv[1], sys.argv[2]
    exe = {t: os.path.join(tools, t) for t in ("tracy-capture", "tracy-csvexport", "dagrt-tracy-read")}
    missing = [t for t, p in exe.items() if not os.access(p, os.X_OK)]
    if not tools or missing:
        print("Tracy end-to-end test skipped: no %s in -Dtracy_tools=%r (scripts/tracy-tools.sh "
              "builds them from ../shared/packagecache's Tracy and zstd snapshots)" % (", ".join(missing), tools))
        sys.exit(77)
    tmp = tempfile.mkdtemp(prefix="dagrt-tracy-")
    out = os.path.join(tmp, "frame.tracy")
    port = free_port()
    cap = subprocess.Popen([exe["tracy-capture"], "-o", out, "-a", "127.0.0.1", "-p", str(port), "-f"],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    env = dict(os.environ, TRACY_PORT=str(port), TRACY_NO_EXIT="1")
    try:
        run = subprocess.run([prog, str(SYNC), str(PIPED)], env=env, capture_output=True, text=True, timeout=120)
        cap_out, _ = cap.communicate(timeout=120)
    except subprocess.TimeoutExpired:
        cap.kill()
        fail("the program or tracy-capture did not finish in 120 s")
    if run.returncode != 0 or run.stdout.strip() != "frames %d %d" % (SYNC, PIPED):
        fail("the program failed (%d): %s%s" % (run.returncode, run.stdout, run.stderr))
    if cap.returncode != 0 or not os.path.isfile(out):
        fail("tracy-capture failed (%d): %s" % (cap.returncode, cap_out))
    print(cap_out.strip().splitlines()[-1] if cap_out.strip() else "")

    # Zones through tracy-csvexport -u: name, src_file (the graph),
    # src_line (the node's index), ns_since_start, exec_time_ns, thread,
    # value (the zone's text: "frame N ...").
    z = subprocess.run([exe["tracy-csvexport"], "-u", out], capture_output=True, text=True, timeout=120)
    if z.returncode != 0:
        fail("tracy-csvexport -u failed: " + z.stderr)
    rows = list(csv.DictReader(io.StringIO(z.stdout)))
    per = {}
    frames = set()
    for r in rows:
        if r["src_file"] != GRAPH:
            continue
        if int(r["exec_time_ns"]) < 0:
            fail("zone %s left open (csvexport: %s)" % (r["name"], r))
        m = re.match(r"frame (\d+)", r["value"])
        if not m or r["name"] not in NODES:
            fail("a zone of the graph without its node or frame: %s" % r)
        f = int(m.group(1))
        frames.add(f)
        per.setdefault((r["name"], f), []).append(r)
    if frames != set(range(SYNC + PIPED)):
        fail("zones for frames %s, not 0..%d" % (sorted(frames), SYNC + PIPED - 1))
    resumed = 0
    for node, kind in NODES.items():
        for f in range(SYNC + PIPED):
            zs = per.get((node, f), [])
            if not zs:
                fail("no zone for %s in frame %d" % (node, f))
            if kind in ("on main", "hot", "task") and len(zs) != 1:
                fail("%d zones for %s in frame %d, not 1" % (len(zs), node, f))
            if node == "net":
                resumed += sum("resumed" in r["value"] for r in zs)
    # Its sleep suspends the fiber task (unless the timer fired before
    # the fiber could park: a loaded machine), so most frames resume it.
    if resumed < (SYNC + PIPED) // 2:
        fail("the fiber task net resumed %d times in %d frames" % (resumed, SYNC + PIPED))
    print("zones: %d rows of %s, %d frames, net resumed %d times" % (len(per), GRAPH, len(frames), resumed))

    # What csvexport does not print: frame sets, fibers, open zones.
    rd = subprocess.run([exe["dagrt-tracy-read"], out], capture_output=True, text=True, timeout=120)
    if rd.returncode != 0:
        fail("dagrt-tracy-read failed: " + rd.stderr)
    sets, fibers, total_open = {}, {}, None
    for line in rd.stdout.splitlines():
        w = line.split(" ")
        if w[0] == "frames":
            sets[" ".join(w[1:-3])] = (w[-3], int(w[-2]), int(w[-1]))
        elif w[0] == "fiber":
            fibers[" ".join(w[1:-2])] = (int(w[-2]), int(w[-1]))
        elif w[0] == "zones":
            total_open = int(w[2])
    print(rd.stdout.strip().replace("\n", "; ")[:600])
    cont = sets.get(GRAPH)
    if not cont or cont[0] != "continuous" or cont[1] != SYNC:
        fail("frame set %s: %s, not %d continuous frames" % (GRAPH, cont, SYNC))
    disc = {k: v for k, v in sets.items() if k.startswith(GRAPH + " #")}
    if any(v[0] != "discontinuous" or v[2] != 0 for v in disc.values()):
        fail("frames in flight: %s (each discontinuous, none left open)" % disc)
    if sum(v[1] for v in disc.values()) != PIPED or len(disc) != 2:
        fail("frames in flight: %s, not %d frames over the pipeline's 2 states" % (disc, PIPED))
    if total_open != 0:
        fail("%s zones left open" % total_open)
    net = fibers.get("net")
    # Each frame: entered at its begin and again at each resume.
    # Each frame: entered at its begin and again at each resume, a zone
    # (slice) each time, on the fiber's own track.
    slices = sum(len(per[(n, f)]) for (n, f) in per if n == "net")
    if not net or net[0] != (SYNC + PIPED) + resumed or net[1] != net[0] or net[1] != slices:
        fail("fiber track net: %s (enters, zones), not %d + %d resumes (%d slices in csvexport)"
             % (net, SYNC + PIPED, resumed, slices))

    # Messages (the run policy's) and plots (the load).
    m = subprocess.run([exe["tracy-csvexport"], "-m", out], capture_output=True, text=True, timeout=120)
    policy = [l for l in m.stdout.splitlines() if l.startswith(GRAPH + " #")]
    if m.returncode != 0 or not policy:
        fail("no run policy message (csvexport -m): %s" % m.stdout[:400])
    p = subprocess.run([exe["tracy-csvexport"], "-u", "-p", out], capture_output=True, text=True, timeout=120)
    plots = {r["name"] for r in csv.DictReader(io.StringIO(p.stdout)) if r["name"].startswith("dagrt ")}
    if plots != {"dagrt ready tasks", "dagrt parked workers"}:
        fail("plots %s (csvexport -u -p)" % sorted(plots))
    print("ok: %d + %d frames, policy messages %d, plots %s" % (SYNC, PIPED, len(policy), sorted(plots)))
    for f in os.listdir(tmp):
        os.unlink(os.path.join(tmp, f))
    os.rmdir(tmp)


if __name__ == "__main__":
    main()
