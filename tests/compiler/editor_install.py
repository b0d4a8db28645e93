#!/usr/bin/env python3
"""`meson install` installs the editor files (grammar/editors/): the Vim
files under share/vim/vimfiles/{syntax,ftdetect}/ and the VS Code extension
under share/dagc/editors/vscode/, each byte for byte the source's. Installs
only the "editors" tag into a scratch --destdir, so it is quick and leaves
the build alone.

usage: editor_install.py SOURCE_DIR BUILD_DIR PREFIX DATADIR SCRATCH_DIR
"""
import os
import shutil
import subprocess
import sys

src, build, prefix, datadir, scratch = sys.argv[1:6]
shutil.rmtree(scratch, ignore_errors=True)
r = subprocess.run(['meson', 'install', '-C', build, '--no-rebuild', '--quiet',
                    '--tags', 'editors', '--destdir', scratch],
                   stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=120)
if r.returncode != 0:
    print(r.stdout)
    print('FAIL: meson install --tags editors failed')
    sys.exit(1)
share = os.path.join(scratch, os.path.join(prefix, datadir).lstrip('/'))
ed = os.path.join(src, 'grammar', 'editors')
want = {
    'vim/vimfiles/syntax/dag.vim': 'vim/syntax/dag.vim',
    'vim/vimfiles/ftdetect/dag.vim': 'vim/ftdetect/dag.vim',
    'dagc/editors/README.md': 'README.md',
    'nvim/site/ftplugin/dag.lua': 'nvim/ftplugin/dag.lua',
}
for root, _, files in os.walk(os.path.join(ed, 'vscode')):
    for f in files:
        rel = os.path.relpath(os.path.join(root, f), ed)
        want['dagc/editors/' + rel] = rel
failures = []
for installed, source in sorted(want.items()):
    path = os.path.join(share, installed)
    if not os.path.isfile(path):
        failures.append(f'{installed} was not installed')
        continue
    with open(path, 'rb') as a, open(os.path.join(ed, source), 'rb') as b:
        if a.read() != b.read():
            failures.append(f'{installed} differs from grammar/editors/{source}')
# Nothing but the editor files under the tag.
for root, _, files in os.walk(scratch):
    for f in files:
        rel = os.path.relpath(os.path.join(root, f), share)
        if rel not in want:
            failures.append(f'the editors tag also installed {rel}')
for m in failures:
    print('FAIL:', m)
if failures:
    sys.exit(1)
print(f'ok: {len(want)} editor files installed under {os.path.relpath(share, scratch)}')
