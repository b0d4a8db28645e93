#!/usr/bin/env python3
"""dagc --lsp under a real client: Neovim's built-in LSP client, headless
(lsp_nvim/test.lua says what it checks). Skipped, with a message, when
nvim is not installed (Debian's `neovim`; scripts/deps.sh test).

usage: lsp_nvim.py DAGC SCRATCH_DIR
"""
import os
import shutil
import subprocess
import sys

dagc, scratch = [os.path.abspath(a) for a in sys.argv[1:3]]
# The project lives outside the source tree: the editor set-up makes a
# file's git root the workspace, and a rename then scans the whole
# repository (every .dag under tests/, compiled, slow under ASan).
import atexit
import tempfile
scratch = tempfile.mkdtemp(prefix='dagc-lsp-nvim-')
atexit.register(shutil.rmtree, scratch, True)
nvim = shutil.which('nvim')
if not nvim:
    print('SKIP: nvim not found (apt-get install neovim)')
    sys.exit(77)
shutil.rmtree(scratch, ignore_errors=True)
os.makedirs(scratch)
with open(os.path.join(scratch, 'b.dag'), 'w') as f:
    f.write('resource bodies;\n'
            'graph physics(struct game *) {\n'
            '    task integrate after prev collide writes bodies cost 2ms;\n'
            '    task collide after integrate reads bodies;\n'
            '}\n')
with open(os.path.join(scratch, 'main.dag'), 'w') as f:
    f.write('import "b.dag";\n'
            'graph frame(struct game *) {\n'
            '    task input on main;\n'
            '    task phys after inptu, prev render run physics;\n'
            '    task hud on main;\n'
            '    gate done = phys and hud;\n'
            '    task render after done on main reads bodies;\n'
            '}\n')
out = os.path.join(scratch, 'result.txt')
env = dict(os.environ, DAGC=dagc,
           LSP_NVIM_EDITORS=os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', 'grammar', 'editors'), LSP_NVIM_DIR=scratch, LSP_NVIM_OUT=out,
           XDG_STATE_HOME=scratch, XDG_CACHE_HOME=scratch, XDG_DATA_HOME=scratch)
lua = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'lsp_nvim', 'test.lua')
try:
    r = subprocess.run([nvim, '--headless', '-n', '-i', 'NONE', '-u', 'NONE', '-c', 'luafile ' + lua],
                       env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, timeout=90)
    print(r.stdout.decode(errors='replace')[-2000:])
except subprocess.TimeoutExpired:
    print('FAIL: nvim did not finish in 90 s')
    sys.exit(1)
res = open(out).read() if os.path.exists(out) else 'no result written\n'
print(res, end='')
sys.exit(0 if res == 'ok\n' else 1)
