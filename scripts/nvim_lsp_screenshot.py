#!/usr/bin/python3
"""Draws docs/img/nvim-lsp.png: Neovim, headless, with dagc --lsp started
by grammar/editors/nvim/ftplugin/dag.lua on a two-file project: a
diagnostic shown in the text and a hover over a task. Neovim's screen is
read through its UI protocol (pynvim), written as HTML and photographed by
headless Chromium. Debian packages: neovim, python3-pynvim, chromium.

usage: scripts/nvim_lsp_screenshot.py DAGC [OUT.png]
"""
import html
import os
import shutil
import subprocess
import sys
import tempfile
import time

import pynvim

COLS, ROWS = 110, 19
root = os.path.abspath(os.path.join(os.path.dirname(__file__), '..'))
dagc = os.path.abspath(sys.argv[1])
out = os.path.abspath(sys.argv[2] if len(sys.argv) > 2 else os.path.join(root, 'docs', 'img', 'nvim-lsp.png'))
chromium = shutil.which('chromium') or shutil.which('chromium-browser')
if not chromium:
    sys.exit('nvim_lsp_screenshot: chromium not found')

tmp = tempfile.mkdtemp()
with open(os.path.join(tmp, 'physics.dag'), 'w') as f:
    f.write('// physics.dag\nresource bodies;\ngraph physics(struct game *) {\n'
            '    task integrate after prev collide writes bodies cost 2ms;\n'
            '    task collide after integrate reads bodies cost 500us;\n}\n')
with open(os.path.join(tmp, 'frame.dag'), 'w') as f:
    f.write('// frame.dag\nimport "physics.dag";\n\ngraph frame(struct game *) {\n'
            '    task input on main;\n'
            '    task phys after inptu, prev render run physics;\n'
            '    task hud on main cost 300us;\n'
            '    gate done = phys and hud;\n'
            '    task render after done on main reads bodies cost 4ms;\n'
            '    task present after render on main;\n}\n')

nv = pynvim.attach('child', argv=['nvim', '--embed', '--headless', '-u', 'NONE', '-i', 'NONE', '-n'])
grid = [[(' ', 0)] * COLS for _ in range(ROWS)]
attrs = {0: {}}
colors = {'fg': 0xd0d0d0, 'bg': 0x1c1c1c}


def redraw(events):
    for ev in events:
        name, args = ev[0], ev[1:]
        for a in args:
            if name == 'default_colors_set':
                if a[0] >= 0:
                    colors['fg'] = a[0]
                if a[1] >= 0:
                    colors['bg'] = a[1]
            elif name == 'hl_attr_define':
                attrs[a[0]] = a[1]
            elif name == 'grid_line':
                _, row, col, cells = a[:4]
                hl = 0
                for cell in cells:
                    text = cell[0]
                    if len(cell) > 1:
                        hl = cell[1]
                    rep = cell[2] if len(cell) > 2 else 1
                    for _ in range(rep):
                        if 0 <= row < ROWS and 0 <= col < COLS:
                            grid[row][col] = (text, hl)
                        col += 1
            elif name == 'grid_clear':
                for r in range(ROWS):
                    grid[r] = [(' ', 0)] * COLS
            elif name == 'grid_scroll':
                _, top, bot, left, right, rows = a[:6]
                src = [row[:] for row in grid]
                for r in range(top, bot):
                    s = r + rows
                    if top <= s < bot:
                        grid[r][left:right] = src[s][left:right]


nv.ui_attach(COLS, ROWS, rgb=True, ext_linegrid=True)
ed = os.path.join(root, 'grammar', 'editors')
nv.command('set runtimepath+=' + ed + '/vim')
nv.command('set runtimepath+=' + ed + '/nvim')
nv.command('set termguicolors background=dark number signcolumn=yes noshowmode noruler laststatus=0')
nv.vars['dagc_lsp_cmd'] = [dagc, '--lsp']
nv.command('syntax on | filetype plugin on')
for hl in ['NormalFloat guibg=#2a2d3a guifg=#e0e0e0', 'FloatBorder guibg=#2a2d3a guifg=#7a7f99',
           'SignColumn guibg=NONE', 'LineNr guifg=#5f6070', 'Comment guifg=#7f8490']:
    nv.command('highlight ' + hl)
nv.exec_lua("vim.lsp.handlers['textDocument/hover'] = "
            "vim.lsp.with(vim.lsp.handlers.hover, { border = 'rounded' })")
nv.command('edit ' + os.path.join(tmp, 'frame.dag'))
nv.exec_lua('vim.wait(8000, function() return #vim.diagnostic.get(0) > 0 end, 50)')
nv.command('call cursor(9, 11)')
nv.exec_lua('vim.lsp.buf.hover()')
nv.exec_lua('vim.wait(1500, function() return false end, 50)')
deadline = time.time() + 3
while time.time() < deadline:
    m = nv.next_message()
    if m and m[0] == 'notification' and m[1] == 'redraw':
        redraw(m[2])
        deadline = time.time() + 0.5  # until the screen is quiet
try:
    nv.close()
except RuntimeError:  # pynvim's loop may already be gone with the child
    pass


def rgb(v):
    return '#%06x' % v


rows_html = []
for row in grid:
    spans = []
    for text, hl in row:
        a = attrs.get(hl, {})
        fg, bg = a.get('foreground', colors['fg']), a.get('background', colors['bg'])
        if a.get('reverse'):
            fg, bg = bg, fg
        style = 'color:%s;background:%s' % (rgb(fg), rgb(bg))
        if a.get('bold'):
            style += ';font-weight:bold'
        if a.get('italic'):
            style += ';font-style:italic'
        if a.get('undercurl') or a.get('underline'):
            style += ';text-decoration:underline wavy %s' % rgb(a.get('special', 0xff5555))
        spans.append('<span style="%s">%s</span>' % (style, html.escape(text or ' ')))
    rows_html.append(''.join(spans))
page = os.path.join(tmp, 'screen.html')
with open(page, 'w') as f:
    f.write('<html><body style="margin:0;background:%s"><pre style="margin:8px;font:15px/1.25 '
            'DejaVu Sans Mono,monospace">%s</pre></body></html>' % (rgb(colors['bg']), '\n'.join(rows_html)))
os.makedirs(os.path.dirname(out), exist_ok=True)
subprocess.run([chromium, '--headless', '--no-sandbox', '--disable-gpu', '--hide-scrollbars',
                '--screenshot=' + out, '--window-size=%d,%d' % (COLS * 9 + 16, ROWS * 19 + 16),
                'file://' + page], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
               timeout=120)
shutil.rmtree(tmp)
print(out)
