#!/usr/bin/env python3
"""Prints 'N passed, N failed[, N skipped]' over one or more meson testlog.json files.

`--add "N passed, N failed"` adds the counts of a run that is not a meson
test log (scripts/windows.sh --smoke); a missing or unreadable line counts
as one failure."""
import json, re, sys

passed = failed = skipped = 0
paths = []
args = sys.argv[1:]
while args:
    a = args.pop(0)
    if a == "--add":
        line = args.pop(0) if args else ""
        m = re.search(r"(\d+) passed, (\d+) failed", line)
        if m:
            passed += int(m.group(1))
            failed += int(m.group(2))
        else:
            failed += 1
            print(f"summarize: no counts in {line!r}", file=sys.stderr)
    else:
        paths.append(a)
for path in paths:
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
