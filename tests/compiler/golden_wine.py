#!/usr/bin/env python3
"""The compiler's golden tests (golden.c's rules) run with dagc.exe under Wine.

usage: golden_wine.py --dagc DAGC.EXE [--wine wine] [--golden DIR] [NAME...]

For every tests/compiler/golden/NAME.dag (or the NAMEs given): runs dagc.exe
in the golden directory with the case's arguments (`// args: ...`, default
`--dot @DOT@`), where @DOT@ and @TMP@ name files in a fresh temporary
directory spelled as a Windows path (drive letter, backslashes), and
compares exit status, stdout and stderr byte for byte with NAME.expected and
the DOT output with NAME.dot: the Windows build's text is the Linux build's
(no CRLF). A failing run must leave no file behind. Then (all cases only)
the Windows cases of windows_cases(). Prints one line per case and ends
with `N passed, N failed`.
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile


RETRIES = []   # runs repeated because Wine itself hung or crashed


def wine_run(argv, cwd):
    """Runs argv under Wine; once more if Wine itself hung or crashed (under
    load Wine now and then faults in a thread of its own at start-up, or
    hangs starting its debugger). Every repeat is reported at the end, and
    a second failure stands."""
    for attempt in (1, 2):
        try:
            r = subprocess.run(argv, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               timeout=60)
        except subprocess.TimeoutExpired:
            if attempt == 2:
                raise
            RETRIES.append("%s (hung)" % " ".join(argv[2:]))
            continue
        if attempt == 1 and b"wine: Unhandled" in r.stderr:
            RETRIES.append("%s (Wine crashed)" % " ".join(argv[2:]))
            continue
        return r


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
        r = wine_run(argv, golden)
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


def windows_cases(args, here):
    """dagc.exe on Windows paths, and outputs replaced all or nothing.

    Yields (name, [reasons]) for: the golden_c cases compiled from a
    backslashed input path into an absolute Windows -o directory
    (byte-identical C, the header named by its base name); a depfile for a `src\\f.dag` input that
    finds the include beside it; an existing output replaced (the old bytes
    gone, no temporary left); and a failing run that leaves an existing
    output as it was."""
    gc = os.path.join(here, "golden_c")
    for f in sorted(os.listdir(gc)):
        if not f.endswith(".dag"):
            continue
        stem = f[:-4]
        tmp = tempfile.mkdtemp(prefix="golden-wine-c-")
        try:
            # The input as golden_c\\NAME.dag from tests\\compiler: the
            # generated comment names it as given, the only difference
            # from the golden text allowed ("paths aside").
            given = "golden_c\\" + f
            r = wine_run([args.wine, args.dagc, "-o", win_path(tmp), given], here)
            why = []
            if r.returncode != 0:
                why.append("exit %d: %s" % (r.returncode, r.stderr.decode("utf-8", "replace")))
            for ext in (".c", ".h"):
                got = os.path.join(tmp, stem + ext)
                want = open(os.path.join(gc, stem + ext), "rb").read()
                text = open(got, "rb").read() if os.path.exists(got) else None
                if text is not None:
                    text = text.replace(given.encode(), f.encode())
                if text != want:
                    why.append("%s%s differs from golden_c" % (stem, ext))
            yield "c_" + stem, why
        finally:
            shutil.rmtree(tmp, ignore_errors=True)

    tmp = tempfile.mkdtemp(prefix="golden-wine-paths-")
    try:
        os.mkdir(os.path.join(tmp, "src"))
        open(os.path.join(tmp, "src", "game.h"), "w").write("/* header */\n")
        open(os.path.join(tmp, "src", "f.dag"), "w").write(
            'include "game.h";\ninclude "elsewhere.h";\ngraph f { task a; }\n')
        r = wine_run([args.wine, args.dagc, "--dot", "f.dot", "-M", "f.d", "src\\f.dag"], tmp)
        dep = open(os.path.join(tmp, "f.d"), "rb").read() if os.path.exists(os.path.join(tmp, "f.d")) else b""
        want = b"f.dot: src\\f.dag \\\n  src\\game.h\n"
        yield "depfile_backslashes", ([] if r.returncode == 0 and dep == want else
                                      ["exit %d, depfile %r, want %r" % (r.returncode, dep, want)])

        out = os.path.join(tmp, "out.dot")
        open(out, "wb").write(b"old bytes\n")
        r = wine_run([args.wine, args.dagc, "--dot", win_path(out), "ok_comments.dag"], args.golden)
        got = open(out, "rb").read()
        want = open(os.path.join(args.golden, "ok_comments.dot"), "rb").read()
        left = [f for f in os.listdir(tmp) if ".tmp-" in f]
        yield "replace_existing", ([] if r.returncode == 0 and got == want and not left else
                                   ["exit %d, replaced: %s, left: %s" % (r.returncode, got == want, left)])

        r = wine_run([args.wine, args.dagc, "--dot", win_path(out), "err_cycle.dag"], args.golden)
        kept = open(out, "rb").read() == want
        left = [f for f in os.listdir(tmp) if ".tmp-" in f]
        yield "failure_keeps_existing", ([] if r.returncode == 1 and kept and not left else
                                         ["exit %d, kept: %s, left: %s" % (r.returncode, kept, left)])
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

    # Imports: one file under two spellings (a backslash, other letter
    # case) is loaded once; another file with the same content is not (its
    # diagnostics name it with '/', as on Linux); -I and the input as
    # absolute Windows paths.
    tmp = tempfile.mkdtemp(prefix="golden-wine-imports-")
    try:
        os.makedirs(os.path.join(tmp, "lib"))
        os.makedirs(os.path.join(tmp, "inc"))
        phys = open(os.path.join(args.golden, "lib", "physics.dag"), "rb").read()
        for n in ("physics.dag", "physics2.dag"):
            open(os.path.join(tmp, "lib", n), "wb").write(phys)
        open(os.path.join(tmp, "inc", "audio.dag"), "w").write("graph audio { task mix; }\n")
        open(os.path.join(tmp, "once.dag"), "w").write(
            'import "lib\\\\physics.dag";\nimport "LIB/Physics.DAG";\ngraph g { task t; }\n')
        open(os.path.join(tmp, "dup.dag"), "w").write(
            'import "lib\\\\physics.dag";\nimport "lib/physics2.dag";\ngraph g { task t; }\n')
        open(os.path.join(tmp, "useinc.dag"), "w").write('import "audio.dag";\ngraph h { task t; }\n')

        def dagc(*a):
            return wine_run([args.wine, args.dagc] + list(a), tmp)
        r = dagc("--check", win_path(os.path.join(tmp, "once.dag")))
        yield "import_once_per_file", [] if r.returncode == 0 else [
            "exit %d: %s" % (r.returncode, r.stderr.decode("utf-8", "replace"))]
        r = dagc("--check", "dup.dag")
        err = r.stderr.decode("utf-8", "replace")
        yield "import_two_files", [] if (r.returncode == 1 and "graph 'physics' is defined twice" in err
                                         and err.startswith("lib/physics2.dag:") and
                                         "lib/physics.dag:6:7: note" in err) else [
            "exit %d: %s" % (r.returncode, err)]
        r = dagc("-I", win_path(os.path.join(tmp, "inc")), "--check", "useinc.dag")
        yield "import_dir_windows_path", [] if r.returncode == 0 else [
            "exit %d: %s" % (r.returncode, r.stderr.decode("utf-8", "replace"))]
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

    def report(n, why):
        nonlocal passed, failed
        if why:
            failed += 1
            print("FAIL golden_wine %s: %s" % (n, "; ".join(why)))
        else:
            passed += 1
            print("ok   golden_wine %s" % n)

    for n in names:
        try:
            why = run_case(args, args.golden, n)
        except subprocess.TimeoutExpired:
            why = ["timed out"]
        report(n, why)
    if not args.names:
        try:
            for n, why in windows_cases(args, os.path.dirname(os.path.abspath(__file__))):
                report("win_" + n, why)
        except subprocess.TimeoutExpired:
            report("win_cases", ["timed out"])
    for r in RETRIES:
        print("note: repeated after a Wine failure: %s" % r)
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
