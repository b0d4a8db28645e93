#!/usr/bin/env python3
"""Prints 'N passed, N failed[, N skipped]' over one or more meson testlog.json files."""
import json, sys

passed = failed = skipped = 0
for path in sys.argv[1:]:
    try:
        with open(path) as f:
            lines = f.readlines()
    except OSError:
        failed += 1
        print(f"summarize: cannot read {path}", file=sys.stderr)
        continue
    for line in lines:
        line = line.strip()
        if not line:
            continue
        r = json.loads(line).get("result", "")
        if r in ("OK", "EXPECTEDFAIL"):
            passed += 1
        elif r == "SKIP":
            skipped += 1
        else:
            failed += 1
tail = f", {skipped} skipped" if skipped else ""
print(f"{passed} passed, {failed} failed{tail}")
sys.exit(1 if failed else 0)
