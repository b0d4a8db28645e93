#!/usr/bin/env python3
"""The editor files (grammar/editors/) against the lexer's keyword list.

Reads the keywords from grammar/lexer.re (its `"word" { return t->code =
TK_...; }` rules), so that a keyword added to the language fails this test
until the Vim syntax file and the TextMate grammar know it, and a word they
highlight as a keyword that the language does not have fails it too. Checks
the TextMate grammar's regexes on each keyword and on near misses, the
language configuration's comments and brackets, and, when Vim is installed,
loads the Vim files in Vim and asks what each keyword is highlighted as.

usage: editor_keywords.py SOURCE_DIR SCRATCH_DIR
"""
import json
import os
import re
import shutil
import subprocess
import sys

src, scratch = sys.argv[1], sys.argv[2]
ed = os.path.join(src, 'grammar', 'editors')
failures = []


def fail(msg):
    failures.append(msg)


with open(os.path.join(src, 'grammar', 'lexer.re')) as f:
    lexer = f.read()
keywords = set(re.findall(r'^\s*"([A-Za-z_]+)"\s*\{\s*return t->code = TK_', lexer, re.M))
if len(keywords) < 22:
    print(f'FAIL: found only {sorted(keywords)} in grammar/lexer.re: has its rule format changed?')
    sys.exit(1)
allowed = keywords

# ---- Vim
with open(os.path.join(ed, 'vim', 'syntax', 'dag.vim')) as f:
    vim_syntax = f.read()
vim_words = {}
for group, words in re.findall(r'^syn keyword (\w+) (.*)$', vim_syntax, re.M):
    if 'contained' in words.split():
        continue
    for w in words.split():
        vim_words[w] = group
for k in sorted(keywords - vim_words.keys()):
    fail(f'vim/syntax/dag.vim does not know the keyword {k!r}')
for w in sorted(vim_words.keys() - allowed):
    fail(f'vim/syntax/dag.vim highlights {w!r}, which is not a keyword of grammar/lexer.re')
with open(os.path.join(ed, 'vim', 'ftdetect', 'dag.vim')) as f:
    if not re.search(r'\*\.dag\s+setf(iletype)?\s+dag', f.read()):
        fail('vim/ftdetect/dag.vim does not set filetype dag for *.dag')

# ---- TextMate grammar
with open(os.path.join(ed, 'vscode', 'syntaxes', 'dag.tmLanguage.json')) as f:
    tm = json.load(f)
kw_regexes = []


def walk(node):
    if isinstance(node, dict):
        name = node.get('name', '')
        if 'match' in node and name.split('.')[0] in ('keyword', 'storage'):
            kw_regexes.append(node['match'])
        for v in node.values():
            walk(v)
    elif isinstance(node, list):
        for v in node:
            walk(v)


walk(tm)
tm_words = set()
for rx in kw_regexes:
    m = re.fullmatch(r'\\b\(\?:([A-Za-z_|]+)\)\\b', rx)
    if not m:
        fail(f'TextMate keyword rule {rx!r} is not of the form \\b(?:a|b)\\b')
        continue
    tm_words |= set(m.group(1).split('|'))
for k in sorted(keywords):
    if not any(re.fullmatch(rx, k) for rx in kw_regexes):
        fail(f'the TextMate grammar does not know the keyword {k!r}')
    for near in (k + 's', 'x' + k, k + '_1'):
        if near not in allowed and any(re.search(rx, near) for rx in kw_regexes):
            fail(f'the TextMate grammar highlights {near!r} as a keyword')
for w in sorted(tm_words - allowed):
    fail(f'the TextMate grammar highlights {w!r}, which is not a keyword of grammar/lexer.re')
if tm.get('scopeName') != 'source.dag':
    fail('the TextMate grammar\'s scopeName is not source.dag')

with open(os.path.join(ed, 'vscode', 'language-configuration.json')) as f:
    conf = json.load(f)
if conf.get('comments') != {'lineComment': '//', 'blockComment': ['/*', '*/']}:
    fail('language-configuration.json: comments are not // and /* */')
if sorted(map(tuple, conf.get('brackets', []))) != [('(', ')'), ('{', '}')]:
    fail('language-configuration.json: brackets are not {} and ()')
with open(os.path.join(ed, 'vscode', 'package.json')) as f:
    pkg = json.load(f)
langs = pkg['contributes']['languages']
if not any('.dag' in l.get('extensions', []) for l in langs):
    fail('package.json does not claim .dag files')
for g in pkg['contributes']['grammars']:
    if not os.path.isfile(os.path.join(ed, 'vscode', g['path'])):
        fail(f'package.json names a grammar {g["path"]!r} that is not there')

# ---- Resources: a scope of their own in the TextMate grammar, for the names
# a `resource` declares and a `reads`/`writes` accesses (and nothing after).
RESOURCE_LINES = [
    # (line, resource names in it, names that are not resources)
    ('resource bodies, poses;', ['bodies', 'poses'], []),
    ('    task t after a reads bodies, poses writes mixer hot;', ['bodies', 'poses', 'mixer'],
     ['t', 'a', 'hot']),
    ('    task u writes mixer  on main;', ['mixer'], ['u', 'main']),
]
res_rules = [r for r in tm.get('repository', {}).get('resources', {}).get('patterns', [])
             if 'match' in r]
names_rule = tm.get('repository', {}).get('resource-names', {}).get('patterns', [])
res_scopes = {r.get('name') for r in names_rule if r.get('match', '').startswith('[A-Za-z_]')}
if not res_rules or len(res_scopes) != 1:
    fail('the TextMate grammar has no #resources rules with one #resource-names scope')
else:
    scope = res_scopes.pop()
    if scope.split('.')[0] in ('keyword', 'storage', 'entity') or not scope.endswith('.dag'):
        fail(f'resource names have scope {scope!r}, not one of their own')
    top = [p.get('include') for p in tm['patterns']]
    if '#resources' not in top or top.index('#resources') > top.index('#declarations'):
        fail('#resources is not included before #declarations (resource NAME would be a declaration)')
    for line, want, not_res in RESOURCE_LINES:
        got = []
        for r in res_rules:
            for m in re.finditer(r['match'], line):
                got += re.findall(r'[A-Za-z_][A-Za-z0-9_]*', m.group(2))
        if got != want:
            fail(f'TextMate: resources in {line.strip()!r} are {got}, expected {want}')
        for w in not_res:
            if w in got:
                fail(f'TextMate: {w!r} in {line.strip()!r} is taken for a resource')

# ---- VS Code's problem matcher for dagc's text diagnostics, against the
# diagnostics of the golden cases: it takes every `FILE:LINE:COL: error:` or
# `warning:` line with its parts, and nothing else (notes, source lines,
# carets, hints, "In file imported from").
matchers = [m for m in pkg['contributes'].get('problemMatchers', []) if m.get('name') == 'dagc']
if len(matchers) != 1:
    fail('package.json has no problem matcher named dagc')
else:
    pm = matchers[0]
    pat = pm.get('pattern', {})
    try:
        rx = re.compile(pat.get('regexp', ''))
    except re.error as e:
        rx = None
        fail(f'the problem matcher regexp does not compile: {e}')
    if not pm.get('fileLocation'):
        fail('the problem matcher has no fileLocation')
    diag_rx = re.compile(r'^(.+?):(\d+):(\d+): (error|warning): (.*)$')
    golden = os.path.join(src, 'tests', 'compiler', 'golden')
    seen = {'error': 0, 'warning': 0}
    for name in sorted(os.listdir(golden)):
        if not name.endswith('.expected') or rx is None:
            continue
        with open(os.path.join(golden, name), errors='replace') as f:
            for line in f.read().split('\n'):
                want = diag_rx.match(line)
                got = rx.match(line)
                if want and not got:
                    fail(f'the problem matcher misses {name}: {line!r}')
                elif got and not want:
                    fail(f'the problem matcher takes {name}: {line!r}')
                elif got:
                    parts = {k: got.group(pat[k]) for k in ('file', 'line', 'column', 'severity', 'message')}
                    if list(parts.values()) != list(want.groups()):
                        fail(f'the problem matcher splits {line!r} as {parts}')
                    seen[parts['severity']] += 1
    if rx is not None and (not seen['error'] or not seen['warning']):
        fail(f'the golden cases gave the problem matcher too little to check: {seen}')

# ---- Vim, for real: filetype detection and each keyword's highlight group.
vim = shutil.which('vim')
if vim:
    os.makedirs(scratch, exist_ok=True)
    sample = os.path.join(scratch, 'sample.dag')
    out = os.path.join(scratch, 'groups.txt')
    lines = sorted(allowed) + ['graphics', '// task after', '250us', '"a\\"b"']
    with open(sample, 'w') as f:
        f.write('\n'.join(lines) + '\n')
    if os.path.exists(out):
        os.remove(out)
    expr = ('map(range(1, line("$")), {_, l -> &filetype . " " . '
            'synIDattr(synID(l, 1, 1), "name")})')
    subprocess.run([vim, '-N', '-u', 'NONE', '-i', 'NONE', '-es',
                    '-c', 'set rtp^=' + os.path.join(ed, 'vim'),
                    '-c', 'filetype on', '-c', 'syntax on', '-c', 'edit ' + sample,
                    '-c', f'call writefile({expr}, "{out}")', '-c', 'qa!'],
                   stdin=subprocess.DEVNULL, timeout=60, check=False)
    if not os.path.exists(out):
        fail('vim wrote nothing: the Vim files did not load')
    else:
        with open(out) as f:
            got = f.read().split('\n')
        want = {'graphics': '', '// task after': 'dagComment', '250us': 'dagDuration',
                '"a\\"b"': 'dagString'}
        for line, res in zip(lines, got):
            ft, _, group = res.partition(' ')
            if ft != 'dag':
                fail(f'vim: sample.dag has filetype {ft!r}, not dag')
                break
            exp = want.get(line)
            if exp is None and group not in ('dagStructure', 'dagInclude', 'dagKeyword', 'dagOperator'):
                fail(f'vim highlights the keyword {line!r} as {group!r}')
            elif exp is not None and group != exp:
                fail(f'vim highlights {line!r} as {group!r}, expected {exp!r}')
    # Resource names, at each name's first column.
    res_sample = os.path.join(scratch, 'resources.dag')
    res_out = os.path.join(scratch, 'resources.txt')
    with open(res_sample, 'w') as f:
        f.write('\n'.join(l for l, _, _ in RESOURCE_LINES) + '\n')
    probes = []
    for ln, (line, want, not_res) in enumerate(RESOURCE_LINES, 1):
        for w in want + not_res:
            col = re.search(r'\b' + w + r'\b', line).start() + 1
            probes.append((ln, col, w, w in want))
    if os.path.exists(res_out):
        os.remove(res_out)
    expr = '[' + ', '.join(f'synIDattr(synID({l}, {c}, 1), "name")' for l, c, _, _ in probes) + ']'
    subprocess.run([vim, '-N', '-u', 'NONE', '-i', 'NONE', '-es',
                    '-c', 'set rtp^=' + os.path.join(ed, 'vim'),
                    '-c', 'filetype on', '-c', 'syntax on', '-c', 'edit ' + res_sample,
                    '-c', f'call writefile({expr}, "{res_out}")', '-c', 'qa!'],
                   stdin=subprocess.DEVNULL, timeout=60, check=False)
    if not os.path.exists(res_out):
        fail('vim wrote nothing for the resource sample')
    else:
        with open(res_out) as f:
            groups = f.read().split('\n')
        for (ln, col, w, is_res), group in zip(probes, groups):
            if is_res and group != 'dagResource':
                fail(f'vim highlights the resource {w!r} (line {ln}) as {group!r}, not dagResource')
            if not is_res and group == 'dagResource':
                fail(f'vim highlights {w!r} (line {ln}) as a resource')
else:
    print('note: vim is not installed: the Vim files were checked as text only')

if failures:
    for m in failures:
        print('FAIL:', m)
    sys.exit(1)
print(f'ok: {len(keywords)} keywords of grammar/lexer.re in the Vim and TextMate files; '
      'resource scopes; the problem matcher on the golden diagnostics')
