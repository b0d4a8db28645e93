#!/usr/bin/env python3
"""`dagc --lsp` driven by a scripted JSON-RPC client: every request the
server offers on a two-file project, its diagnostics against the command
line's JSON (same messages, ranges, flags, fix-its), malformed messages,
and the front end's fuzzer seeds (tests/compiler/golden/*.dag) sent as
edits, cut and mangled, each followed by every request: each must get an
answer or a protocol error and the server must stay up.

usage: lsp_protocol.py DAGC GOLDEN_DIR SCRATCH_DIR [--huge]
(--huge: only a text over the 64 MiB limit, suite slow)
"""
import json
import os
import random
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lsp_client import Client, uri  # noqa: E402

dagc, golden, scratch = [os.path.abspath(a) for a in sys.argv[1:4]]
failures = []

if sys.argv[4:] == ['--huge']:
    # A text over dagc's 64 MiB limit: the command line's error, and every
    # request on it answered (suite slow: about 15 s here).
    c = Client(dagc, timeout=120)
    c.request('initialize', {'capabilities': {}})
    u = uri(os.path.join(scratch, 'huge.dag'))
    c.notify('textDocument/didOpen', {'textDocument': {'uri': u, 'languageId': 'dag', 'version': 1,
                                                       'text': '// ' + 'x' * (65 << 20)}})
    d = c.diagnostics(u)
    ok = len(d) == 1 and 'larger than the 64 MiB limit' in d[0]['message']
    p = {'textDocument': {'uri': u}, 'position': {'line': 0, 'character': 3}}
    for m in ['textDocument/hover', 'textDocument/definition', 'textDocument/completion',
              'textDocument/prepareRename']:
        ok = ok and 'result' in c.request(m, p)
    ok = ok and c.request('textDocument/documentSymbol', {'textDocument': {'uri': u}})['result'] == []
    c.request('shutdown')
    c.notify('exit', {})
    ok = ok and c.close() == 0
    print('ok' if ok else 'FAIL: a text over the size limit: %r' % d)
    sys.exit(0 if ok else 1)


def check(cond, what):
    if not cond:
        failures.append(what)
        print('FAIL:', what)


shutil.rmtree(scratch, ignore_errors=True)
os.makedirs(scratch)
B = os.path.join(scratch, 'b.dag')
M = os.path.join(scratch, 'main.dag')
with open(B, 'w') as f:
    f.write('resource bodies;\n'
            'graph physics(struct game *) {\n'
            '    task integrate after prev collide writes bodies cost 2ms;\n'
            '    task collide after integrate reads bodies;\n'
            '}\n')
MAIN = ('import "b.dag";\n'
        'graph frame(struct game *) {\n'
        '    task input on main;\n'
        '    task phys after input, prev render run physics;\n'
        '    task hud on main;\n'
        '    gate done = phys and hud;\n'
        '    task render after done on main reads bodies;\n'
        '}\n')
with open(M, 'w') as f:
    f.write(MAIN)
um, ub = uri(M), uri(B)


def wp(line, word, text=MAIN, u=None):
    """The position of the middle of word on a line of text."""
    return pos(u or um, line, text.split('\n')[line].index(word) + len(word) // 2)


def pos(u, line, ch):
    return {'textDocument': {'uri': u}, 'position': {'line': line, 'character': ch}}


def err_code(r):
    return r.get('error', {}).get('code')


# ---------------------------------------------------------- the protocol
c = Client(dagc)
check(err_code(c.request('textDocument/hover', pos(um, 0, 0))) == -32002,
      'a request before initialize is refused with ServerNotInitialized')
r = c.request('initialize', {'rootUri': uri(scratch), 'capabilities': {}})
caps = r['result']['capabilities']
for cap in ['definitionProvider', 'referencesProvider', 'hoverProvider', 'documentSymbolProvider',
            'completionProvider', 'renameProvider', 'codeActionProvider']:
    check(cap in caps, 'initialize offers ' + cap)
check(err_code(c.request('initialize', {'capabilities': {}})) == -32600, 'a second initialize is refused')
c.notify('initialized', {})
c.notify('textDocument/didOpen', {'textDocument': {'uri': um, 'languageId': 'dag', 'version': 1, 'text': MAIN}})
d = c.diagnostics(um)
check(d == [], 'a clean file gets an empty diagnostics list: %r' % d)

# definition: the run clause's graph in the imported file, a gate, the import itself
r = c.request('textDocument/definition', wp(3, 'physics'))['result']
check(r and r['uri'] == ub and r['range']['start'] == {'line': 1, 'character': 6},
      'definition of `physics` is its graph in b.dag: %r' % r)
r = c.request('textDocument/definition', wp(6, 'done'))['result']
check(r and r['uri'] == um and r['range']['start'] == {'line': 5, 'character': 9},
      'definition of the gate `done`: %r' % r)
r = c.request('textDocument/definition', pos(um, 0, 9))['result']
check(r and r['uri'] == ub, 'definition of an import is the file: %r' % r)
r = c.request('textDocument/definition', wp(6, 'bodies'))['result']
check(r and r['uri'] == ub and r['range']['start'] == {'line': 0, 'character': 9},
      'definition of the resource `bodies` is in b.dag: %r' % r)
check(c.request('textDocument/definition', pos(um, 1, 0))['result'] is None,
      'definition on a keyword is null')

# references: the resource in both files, with and without its declaration
refs = c.request('textDocument/references', dict(wp(6, 'bodies'), context={'includeDeclaration': True}))['result']
check(len(refs) == 4 and {x['uri'] for x in refs} == {um, ub}, 'references of `bodies`: %r' % refs)
refs = c.request('textDocument/references', dict(wp(6, 'bodies'), context={'includeDeclaration': False}))['result']
check(len(refs) == 3, 'references of `bodies` without its declaration: %d' % len(refs))
refs = c.request('textDocument/references', dict(wp(2, 'input'), context={'includeDeclaration': True}))['result']
check(len(refs) == 2, 'references of the task `input` (declaration, after): %d' % len(refs))

# hover: what a task waits for, its clauses, its cost
h = c.request('textDocument/hover', wp(6, 'render'))['result']['contents']['value']
for want in ['**task** `render`', 'waits for: `done`', 'gate `done` = `phys and hud`', '`on main`',
             '`reads bodies`', 'declared cost: none']:
    check(want in h, 'hover of `render` says %r: %r' % (want, h))
c.notify('textDocument/didOpen', {'textDocument': {'uri': ub, 'languageId': 'dag', 'version': 1, 'text': open(B).read()}})
check(c.diagnostics(ub) == [], 'b.dag is clean too')
h = c.request('textDocument/hover', pos(ub, 2, 10))['result']['contents']['value']
check('declared cost: 2ms' in h and '`writes bodies`' in h and 'waits for: `prev collide`' in h, 'hover of `integrate`: %r' % h)
h = c.request('textDocument/hover', wp(6, 'bodies'))['result']['contents']['value']
check('read by 2 tasks, written by 1' in h, 'hover of a resource counts its readers and writers: %r' % h)

# (v2.2) hover of a per-frame resource says so, with its C type, at its
# declaration, at a use and at a `reads prev R`, and a task's clauses keep
# the `prev`
PF = os.path.join(scratch, 'pf.dag')
PFT = ('resource world, snapshot per frame (struct snapshot), hud per frame;\n'
       'graph pf(struct game *) {\n'
       '    task extract after prev extract reads world writes snapshot;\n'
       '    task blur after extract reads snapshot, prev snapshot writes hud;\n'
       '    task show after blur reads hud, prev hud;\n'
       '}\n')
with open(PF, 'w') as f:
    f.write(PFT)
upf = uri(PF)
c.notify('textDocument/didOpen', {'textDocument': {'uri': upf, 'languageId': 'dag', 'version': 1, 'text': PFT}})
d = c.diagnostics(upf)
check(d == [], 'pf.dag is clean: %r' % d)
for line, word, nth, wants in [
        (0, 'snapshot', 0, ['**resource** `snapshot` per frame (`struct snapshot`)', 'one copy per frame in flight',
                            '`G_snapshot_copy()`', 'read by 1 task, written by 1, previous copy read by 1']),
        (3, 'snapshot', 0, ['per frame (`struct snapshot`)', 'read by 1 task']),
        (3, 'snapshot', 1, ['per frame (`struct snapshot`)', "`reads prev`: the previous frame's copy"]),
        (4, 'hud', 1, ['**resource** `hud` per frame (pf.dag:1)', 'untyped', "`reads prev`: the previous frame's copy"]),
        (0, 'world', 0, ['**resource** `world` (pf.dag:1)', 'read by 1 task, written by 0 in'])]:
    t = PFT.split('\n')[line]
    col = t.index(word, t.index(word) + 1 if nth else 0) + 1
    h = c.request('textDocument/hover', pos(upf, line, col))['result']['contents']['value']
    for want in wants:
        check(want in h, 'hover of %r (line %d) says %r: %r' % (word, line, want, h))
    if word == 'world':
        check('per frame' not in h and 'previous' not in h, 'a shared resource is not per frame: %r' % h)
    if (line, nth) == (3, 0):
        check("`reads prev`: the previous" not in h, 'a plain read of a per-frame resource is not `reads prev`: %r' % h)
h = c.request('textDocument/hover', wp(3, 'blur', PFT, upf))['result']['contents']['value']
check('`reads snapshot, prev snapshot`' in h, 'hover of a task keeps `prev` in its reads: %r' % h)
c.notify('textDocument/didClose', {'textDocument': {'uri': upf}})
c.settle(upf)

# symbols
s = c.request('textDocument/documentSymbol', {'textDocument': {'uri': um}})['result']
check([x['name'] for x in s] == ['frame'] and [x['name'] for x in s[0]['children']] ==
      ['input', 'phys', 'hud', 'done', 'render'], 'document symbols of main.dag: %r' % s)
s = c.request('textDocument/documentSymbol', {'textDocument': {'uri': ub}})['result']
check(sorted(x['name'] for x in s) == ['bodies', 'physics'], 'document symbols of b.dag: %r' % s)


def labels(u, text):
    """Completion at the '|' in text (the document becomes text without it)."""
    at = text.index('|')
    text = text.replace('|', '')
    line = text[:at].count('\n')
    ch = at - (text.rfind('\n', 0, at) + 1)
    c.change(u, text)
    r = c.request('textDocument/completion', pos(u, line, ch))['result']
    return [i['label'] for i in r['items']]


# completion: names in scope, keywords, the clauses still valid
L = labels(um, MAIN.replace('reads bodies', 'reads |'))
check('bodies' in L, 'completion after `reads` offers the resource: %r' % L)
L = labels(um, MAIN.replace('after done on main', 'after | on main'))
check({'input', 'phys', 'done'} <= set(L) and 'prev' in L, 'completion after `after` offers the nodes: %r' % L)
L = labels(um, MAIN.replace('after done on main reads bodies', 'after done on |'))
check(L == ['main'], 'completion after `on` is `main`: %r' % L)
L = labels(um, MAIN.replace('after input, prev render run physics', 'after input |'))
check('hot' in L and 'run' in L and 'after' not in L and 'and' in L and 'or' in L,
      'completion of a clause leaves out the used `after`: %r' % L)
L = labels(um, MAIN.replace('after input, prev render run physics', 'after input, prev render run physics |'))
check('when' in L and 'hot' not in L, 'after `run` only `after` and `when` are clauses: %r' % L)
L = labels(um, MAIN.replace('run physics', 'run ph|'))
check(L == ['physics'], 'completion after `run` offers the other graphs: %r' % L)
L = labels(um, MAIN + '|')
check(set(L) == {'graph', 'import', 'resource', 'include'}, 'completion at the top level: %r' % L)
L = labels(um, MAIN.replace('    task input', '    |task input'))
check('task' in L and 'gate' in L, 'completion at a statement: %r' % L)
c.change(um, MAIN)

# rename: a resource across both files; a task in its graph; bad names refused
r = c.request('textDocument/prepareRename', wp(6, 'bodies'))['result']
check(r and r['placeholder'] == 'bodies', 'prepareRename: %r' % r)
r = c.request('textDocument/rename', dict(wp(6, 'bodies'), newName='rigid'))['result']
ch = r['changes']
check(len(ch.get(um, [])) == 1 and len(ch.get(ub, [])) == 3 and
      all(e['newText'] == 'rigid' for es in ch.values() for e in es), 'rename of `bodies`: %r' % ch)
r = c.request('textDocument/rename', dict(wp(2, 'input'), newName='poll'))['result']['changes']
check(len(r[um]) == 2, 'rename of the task `input`: %r' % r)
check(err_code(c.request('textDocument/rename', dict(wp(2, 'input'), newName='after'))) == -32602,
      'rename to a keyword is refused')
check(err_code(c.request('textDocument/rename', dict(wp(2, 'input'), newName='9x'))) == -32602,
      'rename to a non-identifier is refused')
r = c.request('textDocument/rename', dict(wp(2, 'input'), newName='hud'))
check(err_code(r) == -32803 and 'already defined' in r['error']['message'], 'rename onto a task of the graph is refused: %r' % r)
r = c.request('textDocument/rename', dict(wp(3, 'physics'), newName='frame'))
check(err_code(r) == -32803, 'rename onto another graph is refused: %r' % r)
check('error' in c.request('textDocument/rename', dict(pos(um, 1, 0), newName='x')),
      'rename where there is no name is an error')

# diagnostics as the command line reports them, fix-its as code actions
bad = MAIN.replace('after done', 'after dnoe').replace('prev render run', 'prev render cost 1ms run')
badp = os.path.join(scratch, 'bad.dag')
with open(badp, 'w') as f:
    f.write(bad)
cli = json.loads(subprocess.run([dagc, '--check', '--diagnostics-format=json', badp],
                                stderr=subprocess.PIPE, cwd=scratch).stderr)['diagnostics']
os.remove(badp)  # the workspace holds main.dag and b.dag alone again
got = c.change(um, bad)
check(len(got) == len(cli) and len(cli) >= 2, 'as many diagnostics as the command line: %d, %d' % (len(got), len(cli)))
for g, w in zip(got, cli):
    check(g['message'].split('\nhint: ')[0] == w['message'], 'message %r, command line %r' % (g['message'], w['message']))
    check(g['range']['start'] == {'line': w['line'] - 1, 'character': w['column'] - 1} and
          g['range']['end'] == {'line': w['end_line'] - 1, 'character': w['end_column'] - 1},
          'range %r, command line %r' % (g['range'], w))
    check(g.get('code') == w['flag'] or (g.get('code') is None and w['flag'] is None), 'flag')
acts = c.request('textDocument/codeAction', {'textDocument': {'uri': um}, 'range': {
    'start': {'line': 6, 'character': 0}, 'end': {'line': 6, 'character': 0}}, 'context': {'diagnostics': []}})['result']
fix = [w for w in cli if w['line'] == 7 and w['fixits']][0]['fixits'][0]
check(len(acts) == 1 and acts[0]['kind'] == 'quickfix' and
      acts[0]['edit']['changes'][um][0]['newText'] == fix['text'], 'the fix-it as a code action: %r' % acts)
# a warning's flag is the diagnostic's code
warn = MAIN.replace('resource', 'resource')  # noqa
got = c.change(ub, open(B).read() + 'resource unused;\n')
check(any(g['severity'] == 2 for g in got), 'an unused resource is a warning: %r' % got)
# an error in the imported file shows at the import in the importer
c.change(um, MAIN)
c.notes = []
c.notify('textDocument/didChange', {'textDocument': {'uri': ub, 'version': 3},
                                    'contentChanges': [{'text': open(B).read().replace('after integrate', 'after integrat')}]})
c.request('textDocument/documentSymbol', {'textDocument': {'uri': ub}})
got_b = c.diagnostics(ub)
got_m = c.diagnostics(um)
check(len(got_b) == 1 and 'integrat' in got_b[0]['message'], 'the error in b.dag: %r' % got_b)
check(len(got_m) == 1 and got_m[0]['message'].startswith('in imported file') and
      got_m[0]['range']['start']['line'] == 0, 'the open importer shows it at its import: %r' % got_m)
c.change(ub, open(B).read())
c.notes = []

# hover with a profile named in the settings: measured median and p99
prof_dag = os.path.join(golden, 'ok_profile.dag')
up = uri(prof_dag)
c.notify('workspace/didChangeConfiguration', {'settings': {'dagc': {'profile': os.path.join(golden, 'ok_profile.trace.json')}}})
c.notify('textDocument/didOpen', {'textDocument': {'uri': up, 'languageId': 'dag', 'version': 1, 'text': open(prof_dag).read()}})
c.settle(up)
lines = open(prof_dag).read().split('\n')
ln = next(i for i, t in enumerate(lines) if t.strip().startswith('task physics'))
h = c.request('textDocument/hover', pos(up, ln, lines[ln].index('physics') + 1))['result']['contents']['value']
check('median' in h and 'p99' in h, 'hover with a profile shows measured times: %r' % h)
c.notify('textDocument/didClose', {'textDocument': {'uri': up}})
check(c.settle(up) == [], 'a closed file\'s diagnostics are cleared')
c.notify('workspace/didChangeConfiguration', {'settings': {}})

# positions in UTF-16: a name after non-ASCII text on its line
u8 = MAIN.replace('    task input on main;', '    /* é😀 */ task input on main;')
c.change(um, u8)
col16 = u8.split('\n')[2].index('input') + 1  # python str index: one per code point; 😀 is 2 in UTF-16
r = c.request('textDocument/definition', pos(um, 2, col16 + 1))['result']
check(r and r['range']['start']['character'] == col16, 'UTF-16 columns: %r (want %d)' % (r, col16))

# changes that arrive together are compiled once, after the last of them
burst = b''
for i in range(20):
    body = json.dumps({'jsonrpc': '2.0', 'method': 'textDocument/didChange', 'params': {
        'textDocument': {'uri': um, 'version': 10 + i},
        'contentChanges': [{'text': MAIN.replace('after done', 'after done%d' % i)}]}}).encode()
    burst += b'Content-Length: %d\r\n\r\n' % len(body) + body
c.notes = []
c.raw(burst)
c.request('textDocument/documentSymbol', {'textDocument': {'uri': um}})
pubs = [m['params']['diagnostics'] for m in c.notes if m['params']['uri'] == um]
check(1 <= len(pubs) <= 3 and 'done19' in pubs[-1][0]['message'],
      'a burst of 20 changes compiled %d times, the last one last: %r' % (len(pubs), pubs[-1:]))
c.change(um, MAIN)

# ------------------------------------------------------ malformed input
def raw_reply(data):
    c.raw(data)
    return c.read()


r = raw_reply(b'Content-Length: 9\r\n\r\n{"bad": }')
check(err_code(r) == -32700 and r['id'] is None, 'invalid JSON is a parse error: %r' % r)
r = raw_reply(b'Content-Length: 2\r\n\r\n[]')
check(err_code(r) == -32600, 'a message that is not an object: %r' % r)
r = raw_reply(b'X-Other: 1\r\n\r\n')
check(err_code(r) == -32700, 'a header without Content-Length: %r' % r)
r = raw_reply(b'content-length: 43\r\nContent-Type: application/vscode-jsonrpc; charset=utf-8\r\n\r\n'
              b'{"jsonrpc":"2.0","id":"s1","method":"nope"}')
check(err_code(r) == -32601 and r['id'] == 's1', 'a lower-case header, a Content-Type, a string id: %r' % r)
r = raw_reply(b'Content-Length: -5\r\n\r\n')
check(err_code(r) == -32700, 'a negative Content-Length: %r' % r)
for msg, code, what in [
        ({'jsonrpc': '2.0', 'id': 7}, -32600, 'no method'),
        ({'jsonrpc': '2.0', 'id': {'x': 1}, 'method': 'shutdown'}, -32600, 'an id that is an object'),
        ({'jsonrpc': '2.0', 'id': 8, 'method': 'no/such'}, -32601, 'an unknown method'),
        ({'jsonrpc': '2.0', 'id': 9, 'method': 'textDocument/hover', 'params': 'x'}, -32600, 'params a string'),
        ({'jsonrpc': '2.0', 'id': 10, 'method': 'textDocument/hover', 'params': {}}, -32602, 'hover without a position'),
        ({'jsonrpc': '2.0', 'id': 11, 'method': 'textDocument/definition',
          'params': {'textDocument': {'uri': um}, 'position': {'line': -1, 'character': 0}}}, -32602, 'a negative line'),
        ({'jsonrpc': '2.0', 'id': 12, 'method': 'textDocument/rename', 'params': wp(2, 'input')}, -32602, 'rename without a name'),
        ({'jsonrpc': '2.0', 'id': 13, 'method': 'textDocument/codeAction', 'params': {'textDocument': {'uri': um}}}, -32602, 'codeAction without a range'),
        ({'jsonrpc': '2.0', 'id': 14, 'method': 'textDocument/documentSymbol', 'params': {'textDocument': 5}}, -32602, 'symbols without a uri'),
        ({'jsonrpc': '2.0', 'id': 15, 'method': 'textDocument/completion', 'params': {'position': {}}}, -32602, 'completion without a document')]:
    c.send(msg)
    r = c.read()
    check(err_code(r) == code, '%s: %r' % (what, r))
for req, params in [('textDocument/hover', pos(um, 99999, 99999)), ('textDocument/hover', pos('file:///none.dag', 0, 0)),
                    ('textDocument/completion', pos(um, 99999, 0)), ('textDocument/references', pos(um, 2, 99999)),
                    ('textDocument/documentSymbol', {'textDocument': {'uri': 'file:///none.dag'}})]:
    r = c.request(req, params)
    check('result' in r and r['result'] in (None, []) or req.endswith('completion'), '%s out of range: %r' % (req, r))
# notifications with bad params are ignored, the server stays up
for m, p in [('textDocument/didChange', {}), ('textDocument/didOpen', {'textDocument': 3}),
             ('textDocument/didChange', {'textDocument': {'uri': um}, 'contentChanges': [{'text': 5}]}),
             ('$/cancelRequest', {'id': 1}), ('workspace/didChangeConfiguration', {'settings': [1]})]:
    c.notify(m, p)
check('result' in c.request('textDocument/documentSymbol', {'textDocument': {'uri': um}}), 'alive after bad notifications')

# --------------------------- the fuzzer's seeds as edits, cut and mangled
rng = random.Random(42)
seeds = sorted(f for f in os.listdir(golden) if f.endswith('.dag'))
uf = uri(os.path.join(scratch, 'fuzz.dag'))
c.notify('textDocument/didOpen', {'textDocument': {'uri': uf, 'languageId': 'dag', 'version': 1, 'text': ''}})
c.diagnostics(uf)
sent = answered = 0
for name in seeds:
    text = open(os.path.join(golden, name), 'rb').read().decode('utf-8', 'replace')
    variants = [text, text[:rng.randrange(len(text) + 1)]]
    m = list(text)
    for _ in range(4):
        if m:
            m[rng.randrange(len(m))] = rng.choice('{}();,=."\n/*x 9é')
    variants.append(''.join(m))
    for v in variants:
        c.notify('textDocument/didChange', {'textDocument': {'uri': uf, 'version': 2}, 'contentChanges': [{'text': v}]})
        if '\0' in v:  # JSON's reader takes no NUL in a string: a protocol error, the old text kept
            r = c.read()
            check(err_code(r) == -32700, 'a NUL in a text is a parse error: %r' % r)
        else:
            c.diagnostics(uf)
        c.notes = []
        lines = v.split('\n')
        for _ in range(3):
            ln = rng.randrange(len(lines) + 1)
            ch = rng.randrange(len(lines[ln]) + 2) if ln < len(lines) else 0
            for req in ['textDocument/hover', 'textDocument/definition', 'textDocument/completion',
                        'textDocument/prepareRename']:
                r = c.request(req, pos(uf, ln, ch))
                sent += 1
                answered += 'result' in r or 'error' in r
            r = c.request('textDocument/references', dict(pos(uf, ln, ch), context={'includeDeclaration': True}))
            r = c.request('textDocument/rename', dict(pos(uf, ln, ch), newName='zz'))
            sent += 2
            answered += 2
        for req in ['textDocument/documentSymbol', 'textDocument/codeAction']:
            r = c.request(req, {'textDocument': {'uri': uf}, 'range': {'start': {'line': 0, 'character': 0},
                                                                       'end': {'line': 999, 'character': 0}}})
            sent += 1
            answered += 'result' in r
check(sent == answered, 'every request on the fuzzer seeds answered: %d of %d' % (answered, sent))
print('fuzzer seeds: %d files, %d variants, %d requests answered' % (len(seeds), 3 * len(seeds), answered))

r = c.request('shutdown')
check(r.get('result', 1) is None, 'shutdown answers null')
check(err_code(c.request('textDocument/hover', pos(um, 0, 0))) == -32600, 'requests after shutdown are refused')
c.notify('exit', {})
check(c.close() == 0, 'exit after shutdown: status 0')

# references and renames reach the workspace's files that no open file loads
c = Client(dagc)
c.request('initialize', {'rootUri': uri(scratch), 'capabilities': {}})
c.notify('textDocument/didOpen', {'textDocument': {'uri': ub, 'languageId': 'dag', 'version': 1, 'text': open(B).read()}})
c.settle(ub)
at_b = pos(ub, 0, 11)  # `bodies` in `resource bodies;`
refs = c.request('textDocument/references', dict(at_b, context={'includeDeclaration': True}))['result']
check(len(refs) == 4 and um in {x['uri'] for x in refs}, 'references from b.dag alone reach main.dag: %r' % refs)
ch = c.request('textDocument/rename', dict(at_b, newName='rigid'))['result']['changes']
check(len(ch.get(um, [])) == 1 and len(ch.get(ub, [])) == 3, 'rename from b.dag alone reaches main.dag: %r' % ch)
c.request('shutdown')
c.notify('exit', {})
c.close()

c = Client(dagc)
c.request('initialize', {'capabilities': {'general': {'positionEncodings': ['utf-8', 'utf-16']}}})
c.notify('exit', {})
check(c.close() == 1, 'exit without shutdown: status 1')
c = Client(dagc)
check(c.request('initialize', {'capabilities': {'general': {'positionEncodings': ['utf-8']}}})['result']
      ['capabilities']['positionEncoding'] == 'utf-8', 'UTF-8 positions when the client offers them')
check(c.close() == 1, 'end of input without exit: status 1')

if failures:
    print('%d failures' % len(failures))
    sys.exit(1)
print('ok')
