#!/usr/bin/env python3
"""check_usage.py PROGRAM: the example frame rejects bad arguments with its
usage on stderr, nothing on stdout and exit status 2, and accepts the
limits."""
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests", "fixtures"))
from usage import refused  # noqa: E402

prog = sys.argv[1]
bad = [["0"], ["1000001"], ["12x"], ["--in-flight"], ["--in-flight", "0"],
       ["--in-flight", "5"], ["--in-flight", "two"], ["10", "20"], ["--frames", "3"]]
fails = len(refused(prog, bad))
for args in [["1", "--in-flight", "1"], ["--in-flight", "4", "2"]]:
    r = subprocess.run([prog] + args, capture_output=True, text=True, timeout=60)
    if r.returncode != 0 or "checks: ok" not in r.stdout:
        print(f"{args}: exit {r.returncode}\n{r.stdout}{r.stderr}")
        fails += 1
sys.exit(1 if fails else 0)
