#!/usr/bin/env python3
"""dagc on the input of issue 36: 100,000 task names sharing a 56-character
prefix, and 20 references to names that do not exist, each one edit from
one of them (bench/compiler/gen_graph.py --dangling). dagc must exit 1 with
exactly the 20 errors, in order, each suggesting the name it is one edit
from, and no other diagnostic. No time is asserted here: bench/compiler/run.sh
--suggest measures it (before issue 36 each unknown name compared every name
in full, 40 s in all; the work is now bounded, see tests/compiler/test_suggest.c).

usage: suggest_scale.py DAGC [N] [K]
"""
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "bench", "compiler"))
import gen_graph  # noqa: E402


def main():
    dagc = sys.argv[1]
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 100000
    k = int(sys.argv[3]) if len(sys.argv) > 3 else 20
    gen = os.path.join(HERE, "..", "..", "bench", "compiler", "gen_graph.py")
    _, refs = gen_graph.dangling_refs(n, k, 56)
    with tempfile.TemporaryDirectory(prefix="dagc-suggest-") as tmp:
        path = os.path.join(tmp, "names.dag")
        with open(path, "w") as f:
            subprocess.run([sys.executable, gen, str(n), "--dangling", str(k)], stdout=f, check=True)
        p = subprocess.run([dagc, "--check", path], capture_output=True, text=True)
    errors = [line for line in p.stderr.splitlines() if line.startswith(path + ":")]
    want = [f"unknown name '{written}'; did you mean '{target}'?" for _, written, target in refs]
    got = [line.split(": error: ", 1)[1] if ": error: " in line else line for line in errors]
    failed = []
    if p.returncode != 1:
        failed.append(f"exit status {p.returncode}, not 1")
    if got != want:
        failed.append(f"{len(got)} diagnostics, not the {len(want)} expected")
        for i in range(max(len(got), len(want))):
            g = got[i] if i < len(got) else "(none)"
            w = want[i] if i < len(want) else "(none)"
            if g != w:
                failed.append(f"  #{i}: got  {g}\n       want {w}")
    # Each error is followed by its source line and caret, nothing else.
    if len(p.stderr.splitlines()) != 3 * len(want):
        failed.append(f"{len(p.stderr.splitlines())} lines of diagnostics, not {3 * len(want)}")
    if failed:
        print("\n".join(failed))
        print(p.stderr[-3000:])
        return 1
    print(f"{k} unknown names among {n} sharing a 56-character prefix: each suggested right")
    return 0


if __name__ == "__main__":
    sys.exit(main())
