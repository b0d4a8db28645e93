#!/usr/bin/env python3
"""run_traced.py PROGRAM TRACE FRAMES: runs the example frame with
DAGRT_TRACE=TRACE (libdagrt writes it when the runtime is destroyed),
quietly, for the build's measured diagram. Fails when the program fails or
writes no trace."""
import os
import subprocess
import sys

prog, trace, frames = sys.argv[1:4]
env = dict(os.environ, DAGRT_TRACE=trace)
r = subprocess.run([prog, frames], env=env, stdout=subprocess.DEVNULL,
                   stderr=subprocess.PIPE, text=True)
if r.returncode != 0 or not os.path.exists(trace):
    sys.stderr.write(r.stderr)
    sys.exit(f"run_traced.py: {prog} {frames} exited {r.returncode}"
             + ("" if os.path.exists(trace) else f" and wrote no {trace}"))
