#!/usr/bin/env python3
"""docs/language.md's "What the C back end declares" against what the back
end declares: every function and type the header adds beside the task
functions (everything from G_run on in tests/compiler/golden_c/names.h,
the golden output of a graph whose tasks are named like entry points) is
in the docs' list, and the list names nothing the header lacks.

usage: doc_entry_points.py SOURCE_DIR
"""
import os
import re
import sys

src = sys.argv[1]
with open(os.path.join(src, 'tests', 'compiler', 'golden_c', 'names.h')) as f:
    header = f.read()
with open(os.path.join(src, 'docs', 'language.md')) as f:
    doc = f.read()

start = header.index('int names_run(')
entries = set()
for m in re.finditer(r'^(?:int|void|size_t|bool|unsigned) (names_\w+)\(', header[start:], re.M):
    entries.add('G_' + m.group(1)[len('names_'):])
for m in re.finditer(r'^\} (names_\w+);', header[start:], re.M):
    entries.add('G_' + m.group(1)[len('names_'):])

sec = re.search(r'^## What the C back end declares\n(.*?)(?=^## )', doc, re.M | re.S)
if not sec:
    print('FAIL: docs/language.md has no section "What the C back end declares"')
    sys.exit(1)
text = sec.group(1)
documented = set(re.findall(r'^\s*(?:int|void)\s+(G_\w+)\(', text, re.M))
documented |= set(re.findall(r'`(?:int|void) (G_\w+)\(', text))
documented |= set(re.findall(r'typedef struct G_\w+ (G_\w+);', text))
documented -= {'G_t', 'G_t_count'}  # a task's functions, not the back end's

failures = [f'the header declares {e}, which the docs do not list' for e in sorted(entries - documented)]
failures += [f'the docs list {e}, which the header does not declare' for e in sorted(documented - entries)]
for m in failures:
    print('FAIL:', m)
if failures:
    sys.exit(1)
print(f'ok: the {len(entries)} entry points and types of the header are the docs\' list: '
      + ', '.join(sorted(entries)))
