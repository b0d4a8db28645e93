#!/usr/bin/env python3
"""Configure-time helper for tests/e2e/meson.build: lists every .dag file
under tests/, examples/ and bench/ that is meant to compile (golden error
and usage cases, named err_* and usage_*, are not), one per line as
ID<TAB>PATH<TAB>STUBDIR<TAB>IMPORT_DIRS, and writes stub headers into STUBDIR for each
`include` that does not exist beside the .dag file (golden inputs include
headers that were never written; the e2e build only needs them to exist).

IMPORT_DIRS are the `-I DIR` of the file's `// args:` line (golden cases
that import through -I), absolute and ':'-separated, or '-' for none.

usage: e2e_dags.py SOURCE_ROOT STUB_ROOT"""
import os
import re
import sys

SKIP_PREFIXES = ("err_", "usage_")
# A file whose graphs are another's, comments, blank space and `include`
# lines aside (the checker never looks inside a context: it brings its own
# functions), would run the same frames again: the first in path order is
# checked, the copy skipped (tests/compiler/golden/ok_profile.dag is
# ok_contract_example.dag with another comment; ok_bench_frame.dag is
# bench/frame/bench_frame.dag without its include).
# tests/integrations: their contexts include the middleware adapters'
# headers (integrations/, Box2D), and tests/integrations builds and checks
# those graphs itself.
SKIP_DIRS = {"fuzz-corpus", "build", ".git", "integrations"}


def includes(text):
    # Strings only after `include`; \" and \\ escapes (language contract).
    for m in re.finditer(r'\binclude\s*"((?:[^"\\\n]|\\.)*)"\s*;', text):
        yield re.sub(r'\\(.)', r'\1', m.group(1))


def graphs_only(text):
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    text = re.sub(r"//[^\n]*", " ", text)
    text = re.sub(r'\binclude\s*"(?:[^"\\\n]|\\.)*"\s*;', " ", text)
    return " ".join(text.split())


def import_dirs(text, src_dir):
    first = text.split("\n", 1)[0]
    if not first.startswith("// args:"):
        return "-"
    words = first[len("// args:"):].split()
    dirs = [os.path.normpath(os.path.join(src_dir, words[i + 1]))
            for i, w in enumerate(words[:-1]) if w == "-I"]
    return ":".join(dirs) or "-"


def main():
    root, stub_root = sys.argv[1], sys.argv[2]
    found = []
    for top in ("tests", "examples", "bench"):
        for d, dirs, files in os.walk(os.path.join(root, top)):
            dirs[:] = sorted(x for x in dirs if x not in SKIP_DIRS and not x.startswith("build"))
            for f in sorted(files):
                if f.endswith(".dag") and not f.startswith(SKIP_PREFIXES):
                    found.append(os.path.relpath(os.path.join(d, f), root))
    checked = {}
    for rel in sorted(found):
        body = graphs_only(open(os.path.join(root, rel), encoding="utf-8", errors="replace").read())
        if body in checked:
            sys.stderr.write("e2e_dags.py: %s: the graphs of %s, checked there\n" % (rel, checked[body]))
            continue
        checked[body] = rel
        # Coroutine tasks (`coro`, 2.2) run only from C++ output, which the
        # checker (C) cannot host: tests/cxx runs them in every mode
        # (coro_graph_node, coro_graph_wait).
        if re.search(r"\bcoro\b", body):
            sys.stderr.write("e2e_dags.py: %s: coroutine tasks, checked by tests/cxx\n" % rel)
            continue
        ident = re.sub(r"[^A-Za-z0-9]", "_", rel[:-4])
        stub = os.path.join(stub_root, ident)
        os.makedirs(stub, exist_ok=True)
        src_dir = os.path.dirname(os.path.join(root, rel))
        text = open(os.path.join(root, rel), encoding="utf-8", errors="replace").read()
        for inc in includes(text):
            if inc.startswith("<") or "/" in inc or os.path.exists(os.path.join(src_dir, inc)):
                continue
            path = os.path.join(stub, inc)
            if not os.path.exists(path):
                with open(path, "w") as fh:
                    fh.write("/* stub written by tests/e2e/e2e_dags.py */\n")
        print("%s\t%s\t%s\t%s" % (ident, rel, stub, import_dirs(text, src_dir)))


if __name__ == "__main__":
    main()
