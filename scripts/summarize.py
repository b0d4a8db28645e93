#!/usr/bin/env python3
"""Prints 'N passed, N failed[, N skipped]' over one or more meson testlog.json files.

`--add "N passed, N failed"` adds the counts of a run that is not a meson
test log (scripts/windows.sh --smoke); a missing or unreadable line counts
as one failure. Each test that did not pass is named, with the build
directory it ran in, on a line of its own just above the counts (the
first three with the last lines of their output), so the tail of a CI log
says which one it was."""
import json, re, sys

passed = failed = skipped = 0
paths = []
names = []
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
        if m and int(m.group(2)):
            names.append(f"failed in an added run: {line.strip()}")
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
        t = json.loads(line)
        r = t.get("result", "")
        if r in ("OK", "EXPECTEDFAIL"):
            passed += 1
        elif r == "SKIP":
            skipped += 1
        else:
            failed += 1
            where = path.split("/meson-logs/")[0]
            head = f"{r}: {where}: {t.get('name', '?')} ({t.get('duration', 0):.2f} s)"
            out = (t.get("stdout") or "").rstrip().splitlines()
            if sum(1 for n in names if "\n" in n) < 3 and out:
                head += "\n" + "\n".join("    | " + o for o in out[-15:])
            names.append(head)
for n in names:
    print(n)
tail = f", {skipped} skipped" if skipped else ""
print(f"{passed} passed, {failed} failed{tail}")
sys.exit(1 if failed else 0)
