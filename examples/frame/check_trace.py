#!/usr/bin/env python3
"""check_trace.py PROGRAM FRAMES: runs the example frame with DAGRT_TRACE and
checks what its trace shows of the audio: in every frame of both runs the
mixer is a node of its own (one event, named `mixer`), the audio task begins
after it ended (`audio after mixer`), and audio's fiber never parks (no slice
of it ends `suspended`): the block is mixed before audio runs, not by a task
that audio spawns and waits for, which the trace does not record
(docs/example.md, "Where the frame time goes")."""
import collections
import json
import os
import subprocess
import sys
import tempfile

prog, frames = sys.argv[1], int(sys.argv[2])
with tempfile.TemporaryDirectory() as d:
    path = os.path.join(d, "t.json")
    r = subprocess.run([prog, str(frames)], env=dict(os.environ, DAGRT_TRACE=path),
                       capture_output=True, text=True, timeout=600)
    if r.returncode != 0 or "checks: ok" not in r.stdout:
        sys.exit(f"check_trace.py: {prog} {frames} exited {r.returncode}\n{r.stdout}{r.stderr}")
    with open(path) as f:
        trace = json.load(f)
by = collections.defaultdict(lambda: collections.defaultdict(list))
for e in trace["traceEvents"]:
    if e.get("ph") == "X" and e.get("cat") == "frame":
        by[e["args"]["frame"]][e["name"]].append(e)
# Both runs, each after a warm-up of 20 frames: 2 * (frames + 20) frames.
want = 2 * (frames + 20)
bad = []
if len(by) != want:
    bad.append(f"{len(by)} frames in the trace, not {want}")
for n, ev in sorted(by.items()):
    mixer, audio = ev.get("mixer", []), ev.get("audio", [])
    if len(mixer) != 1 or not audio:
        bad.append(f"frame {n}: {len(mixer)} mixer events, {len(audio)} audio slices")
        continue
    end = mixer[0]["ts"] + mixer[0]["dur"]
    if min(a["ts"] for a in audio) < end:
        bad.append(f"frame {n}: audio began before the mixer ended")
    if any(a["args"].get("suspended") for a in audio):
        bad.append(f"frame {n}: the audio fiber parked")
for b in bad[:10]:
    print(b)
print(f"check_trace.py: {len(by)} frames, {len(bad)} problems")
sys.exit(1 if bad else 0)
