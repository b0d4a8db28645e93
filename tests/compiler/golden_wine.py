#!/usr/bin/env python3
"""The compiler's golden tests (golden.c's rules) run with dagc.exe under Wine.

usage: golden_wine.py --dagc DAGC.EXE [--wine wine] [--golden DIR] [NAME...]

For every tests/compiler/golden/NAME.dag (or the NAMEs given): runs dagc.exe
in the golden directory with the case's arguments (`// args: ...`, default
`--dot @DOT@`), where @DOT@ and @TMP@ name files in a fresh temporary
directory spelled as a Windows path (drive letter, backslashes), and
compares exit status, stdout and stderr byte for byte with NAME.expected and
the DOT output with NAME.dot: the Windows build's text is the Linux build's
(no CRLF). A failing run must leave no file behind. Prints one line per
case and ends with `N passed, N failed`.
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile


def win_path(p):
    # Wine maps the Unix root to drive Z:.
    return "Z:" + os.path.abspath(p).replace("/", "\\")


def run_case(args, golden, name):
    src = open(os.path.join(golden, name + ".dag"), "rb").read().decode("utf-8", "replace")
    tmp = tempfile.mkdtemp(prefix="golden-wine-")
    try:
        wtmp = win_path(tmp)
        words = src[8:].split("\n", 1)[0].split() if src.startswith("// args:") else ["--dot", "@DOT@"]
        argv = [args.wine, args.dagc]
        for w in words:
            if w == "@DOT@":
                w = wtmp + "\\out.dot"
            elif w.startswith("@TMP@"):
                w = wtmp + w[5:]
            argv.append(w)
        argv.append(name + ".dag")
        r = subprocess.run(argv, cwd=golden, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           timeout=120)
        actual = b"exit %d\n--- stdout\n%s--- stderr\n%s" % (r.returncode, r.stdout, r.stderr)
        why = []
        exp_path = os.path.join(golden, name + ".expected")
        expected = open(exp_path, "rb").read() if os.path.exists(exp_path) else None
        if expected != actual:
            why.append("output differs\n--- expected\n%s--- actual\n%s" % (
                (expected or b"(missing)\n").decode("utf-8", "replace"),
                actual.decode("utf-8", "replace")))
        dot_exp_path = os.path.join(golden, name + ".dot")
        dot_exp = open(dot_exp_path, "rb").read() if os.path.exists(dot_exp_path) else None
        out_dot = os.path.join(tmp, "out.dot")
        dot_out = open(out_dot, "rb").read() if os.path.exists(out_dot) else None
        if dot_exp != dot_out:
            why.append("DOT output differs from %s.dot" % name)
        left = os.listdir(tmp)
        if r.returncode != 0 and left:
            why.append("exit %d but left %s behind" % (r.returncode, left))
        if r.returncode == 0 and any(".tmp-" in f for f in left):
            why.append("a temporary was left behind: %s" % left)
        return why
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dagc", required=True)
    ap.add_argument("--wine", default="wine")
    ap.add_argument("--golden", default=os.path.join(os.path.dirname(__file__), "golden"))
    ap.add_argument("names", nargs="*")
    args = ap.parse_args()
    args.dagc = os.path.abspath(args.dagc)
    names = args.names or sorted(f[:-4] for f in os.listdir(args.golden) if f.endswith(".dag"))
    passed = failed = 0
    for n in names:
        try:
            why = run_case(args, args.golden, n)
        except subprocess.TimeoutExpired:
            why = ["timed out"]
        if why:
            failed += 1
            print("FAIL golden_wine %s: %s" % (n, "; ".join(why)))
        else:
            passed += 1
            print("ok   golden_wine %s" % n)
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
