#!/usr/bin/env python3
"""check_usage.py PROGRAM: bench_example_frame rejects bad arguments with its
usage on stderr, nothing on stdout and exit status 2, and a run narrowed to
one depth and one hand-over times just those ways and passes its checks."""
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests", "fixtures"))
from usage import refused  # noqa: E402

prog = sys.argv[1]
bad = [["--handover"], ["--handover", "x"], ["--in-flight", "0"], ["--in-flight", "5"],
       ["--rounds", "65"], ["--frames", "0"], ["--frames"], ["--bogus"], ["7"]]
fails = len(refused(prog, bad))
# One depth, one hand-over: serial and one at a time of the whole bodies only.
r = subprocess.run([prog, "--quick", "--frames", "20", "--in-flight", "1", "--handover", "bodies"],
                   capture_output=True, text=True, timeout=120)
names = [l[:26].strip() for l in r.stdout.splitlines() if l.startswith(("heights,", "bodies,"))]
if r.returncode != 0 or "checks: ok" not in r.stdout or \
        names != ["bodies, serial", "bodies, one at a time"]:
    print(f"narrowed run: exit {r.returncode}, ways {names}\n{r.stdout}{r.stderr}")
    fails += 1
sys.exit(1 if fails else 0)
