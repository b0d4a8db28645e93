#!/usr/bin/env python3
"""The build targets that the tests of a selection need, one per line, for
`ninja -C BUILD $(scripts/test_targets.py BUILD ...)`: a sanitizer stage
builds what it runs and nothing else (scripts/sanitize.sh). The selection
is meson test's: --suite S (any of them) and --no-suite S (none of them),
suite names without the project's prefix.

usage: scripts/test_targets.py BUILD [--suite S]... [--no-suite S]..."""
import json
import os
import sys


def main(argv):
    if len(argv) < 2:
        sys.exit(__doc__)
    build, rest = argv[1], argv[2:]
    want, skip = set(), set()
    while rest:
        opt, name, rest = rest[0], rest[1] if len(rest) > 1 else None, rest[2:]
        if opt not in ("--suite", "--no-suite") or name is None:
            sys.exit(__doc__)
        (want if opt == "--suite" else skip).add(name)
    info = os.path.join(build, "meson-info")
    with open(os.path.join(info, "intro-tests.json")) as f:
        tests = json.load(f)
    with open(os.path.join(info, "intro-targets.json")) as f:
        files = {t["id"]: t["filename"] for t in json.load(f)}
    out = set()
    for t in tests:
        suites = {s.split(":", 1)[-1] for s in t["suite"]}
        if suites & skip or (want and not suites & want):
            continue
        for d in t["depends"]:
            out.update(os.path.relpath(p, build) for p in files.get(d, []))
    print("\n".join(sorted(out)))


if __name__ == "__main__":
    main(sys.argv)
