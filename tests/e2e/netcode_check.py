#!/usr/bin/env python3
"""netcode_check.py PROGRAM FRAMES DROP: runs the netcode example
(examples/netcode) with --frames FRAMES --drop DROP and checks its output
lines against what the loss injection must give: FRAMES + 1 datagrams (the
last word), the multiples of DROP among them dropped, every other one
received, the drops seen as sequence gaps, the receiver in step on the
frames whose datagram was not dropped (or arrived late), the shutdown's
receive cancelled, `checks: ok` and exit status 0. Then its usage errors:
exit status 2, the usage on stderr, nothing on stdout. DAGRT_IO from the
environment picks the reactor (the test's env sets it for the fallback)."""
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures"))
from usage import refused  # noqa: E402

prog, frames, drop = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
fails = []


def expect(cond, what):
    if not cond:
        fails.append(what)


r = subprocess.run([prog, "--frames", str(frames), "--drop", str(drop)],
                   capture_output=True, text=True, timeout=120)
out = r.stdout
total = frames + 1
dropped = total // drop if drop else 0
sent = total - dropped
expect(r.returncode == 0, f"exit status {r.returncode}")
m = re.search(r"^sender: (\d+) datagrams \(\d+ frames \+ the last word\), (\d+) sent, (\d+) dropped, 0 failed$", out, re.M)
expect(m and tuple(map(int, m.groups())) == (total, sent, dropped), "the sender's line")
m = re.search(r"^receiver: (\d+) received, (\d+) dropped \(sequence gaps\), (\d+) out of order, 0 malformed; "
              r"in step with the sender on (\d+) of (\d+) frames", out, re.M)
expect(m is not None, "the receiver's line")
if m:
    got, gaps, ooo, in_step, nframes = map(int, m.groups())
    expect(got == sent and gaps == dropped, f"received {got} (want {sent}), gaps {gaps} (want {dropped})")
    # Dropped frames are never in step; a late datagram only costs its frame.
    lost = frames // drop if drop else 0
    expect(nframes == frames and in_step <= frames - lost and in_step > 0, f"in step on {in_step}")
expect(re.search(r"^shutdown: the receive waiting with no traffic returned operation cancelled after", out, re.M),
       "the shutdown's receive was not cancelled")
expect(re.search(rf"^checks: ok \(.*final state = sender's last \(seq {total}\): yes", out, re.M), "checks: ok")
if fails:
    print("\n".join(fails))
    print(out + r.stderr)

fails += refused(prog, [["--frames", "0"], ["--frames"], ["--drop", "1"], ["--drop", "-2"], ["--drop", "x"], ["7"],
                        ["--frames", "1000001"]])
sys.exit(1 if fails else 0)
