#!/usr/bin/env python3
"""speedscope_view.py FRAME_EXE DAGC FRAME_DAG PROBE_HTML WORKDIR SCRIPTS_DIR

Loads a real libdagrt trace into speedscope (the npm package's built web
app) in headless Chromium and checks that the symbols it shows are the
graph's node names, one per node (plus dagrt's `idle`). FRAME_EXE (the
example frame) runs FRAME_DAG a few frames with
DAGRT_TRACE=WORKDIR/t.speedscope.json, then again with the default Trace
Event Format file; PROBE_HTML, served from the same localhost origin as
speedscope, opens each in speedscope's sandwich view, steps through its
profiles (one per thread) and hands back every profile's symbol table
through --dump-dom. What speedscope shows for the default file is printed,
not asserted (docs/runtime.md, "Which viewer shows what").

Exits 77 (skipped) when Chromium or npm is missing and cannot be
installed (scripts/deps.sh viewer), or when speedscope cannot be fetched
from the npm registry."""
import functools
import html
import http.server
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading

SPEEDSCOPE = 'speedscope@1.25.0'
FRAMES = '20'


def skip(why):
    print(f'speedscope_view: skipped: {why}')
    sys.exit(77)


def fail(why):
    sys.exit(f'speedscope_view: FAIL: {why}')


def tools(scripts):
    if not (shutil.which('chromium') and shutil.which('npm')):
        r = subprocess.run(['bash', os.path.join(scripts, 'deps.sh'), 'viewer'])
        if r.returncode != 0 or not (shutil.which('chromium') and shutil.which('npm')):
            skip('needs Debian chromium and npm (scripts/deps.sh viewer)')


def speedscope_app(work):
    """The npm package ships its built app; install it once per build dir."""
    prefix = os.path.join(work, 'npm')
    app = os.path.join(prefix, 'node_modules', 'speedscope', 'dist', 'release')
    if not os.path.exists(os.path.join(app, 'index.html')):
        r = subprocess.run(['npm', 'install', '--no-audit', '--no-fund', '--prefix', prefix,
                            SPEEDSCOPE], capture_output=True, text=True)
        if r.returncode != 0 or not os.path.exists(os.path.join(app, 'index.html')):
            skip(f'npm install {SPEEDSCOPE} failed (offline?): {r.stderr.strip()[-300:]}')
    return app


def node_names(dagc, dag):
    """The graph's tasks from dagc's own DOT: boxes are tasks, the diamond
    joins (and/or) run no code and are not in a trace."""
    dot = subprocess.run([dagc, '--dot', '-', dag], capture_output=True, text=True, check=True).stdout
    return {m.group(2) for m in re.finditer(r'^\s*"([^".]+)\.([^"]+)" \[shape=(\w+)', dot, re.M)
            if m.group(3) != 'diamond'}


def run_traced(exe, trace):
    r = subprocess.run([exe, FRAMES], env=dict(os.environ, DAGRT_TRACE=trace),
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if r.returncode != 0 or not os.path.exists(trace):
        fail(f'{exe} {FRAMES} exited {r.returncode}: {r.stderr}')


def serve(root):
    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass
    handler = functools.partial(Quiet, directory=root)
    srv = http.server.ThreadingHTTPServer(('127.0.0.1', 0), handler)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    return srv


def view(port, root, name, profiles):
    """Every profile's symbols as speedscope's sandwich view lists them."""
    udd = tempfile.mkdtemp(prefix='chromium-', dir=root)
    url = f'http://127.0.0.1:{port}/probe.html?profile={name}&n={profiles}'
    cmd = ['chromium', '--headless', '--no-sandbox', '--disable-gpu',
           '--disable-background-networking', '--disable-component-update', '--disable-sync',
           '--no-first-run', f'--user-data-dir={udd}', '--window-size=1400,3000',
           '--virtual-time-budget=30000', '--dump-dom', url]
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    except subprocess.TimeoutExpired:
        fail(f'chromium did not finish on {name} within 120 s')
    finally:
        shutil.rmtree(udd, ignore_errors=True)
    m = re.search(r'<pre id="out">(.*?)</pre>', r.stdout, re.S)
    if not m:
        fail(f'chromium printed no probe result for {name} (rc {r.returncode}): {r.stderr[-500:]}')
    return json.loads(html.unescape(m.group(1)))


def main():
    exe, dagc, dag, probe, work, scripts = map(os.path.abspath, sys.argv[1:7])
    tools(scripts)
    os.makedirs(work, exist_ok=True)
    app = speedscope_app(work)
    root = tempfile.mkdtemp(prefix='viewer-', dir=work)
    try:
        os.symlink(app, os.path.join(root, 'ss'))
        shutil.copy(probe, os.path.join(root, 'probe.html'))
        ss_trace = os.path.join(root, 't.speedscope.json')
        tef_trace = os.path.join(root, 't.json')
        run_traced(exe, ss_trace)
        run_traced(exe, tef_trace)
        nodes = node_names(dagc, dag)
        if not nodes:
            fail(f'dagc --dot {dag} named no tasks')
        srv = serve(root)
        port = srv.server_address[1]

        doc = json.load(open(ss_trace))
        shown = view(port, root, 't.speedscope.json', len(doc['profiles']))
        if isinstance(shown, dict):
            fail(f'speedscope did not open the .speedscope.json file: {shown}')
        seen = set()
        for k, p in enumerate(shown):
            names = [s['name'] for s in p['symbols']]
            if len(names) != len(set(names)):
                fail(f'profile {k}: a symbol shown twice: {sorted(names)}')
            for s in p['symbols']:
                want = 'dagrt' if s['name'] == 'idle' else os.path.splitext(os.path.basename(dag))[0]
                if s['file'] != want:
                    fail(f'profile {k}: symbol {s["name"]} in file {s["file"]}, not {want}')
            seen |= set(names)
        if seen - {'idle'} != nodes:
            fail(f'speedscope shows {sorted(seen)}; the graph\'s nodes are {sorted(nodes)}'
                 f' (missing {sorted(nodes - seen)}, extra {sorted(seen - nodes - {"idle"})})')
        print(f'speedscope_view: .speedscope.json: {len(shown)} profiles, symbols '
              f'{sorted(seen)}: the graph\'s {len(nodes)} nodes, one each'
              + (', and idle' if 'idle' in seen else ''))

        # The default file, reported: one profile per thread that has events.
        tef = json.load(open(tef_trace))
        tids = {e['tid'] for e in tef['traceEvents'] if e.get('ph') == 'X'}
        shown = view(port, root, 't.json', len(tids))
        if isinstance(shown, dict):
            print(f'speedscope_view: default file: {shown}')
        else:
            names = [s['name'] for p in shown for s in p['symbols']]
            print(f'speedscope_view: default file: {len(shown)} profiles, {len(set(names))} '
                  f'distinct symbols for {len(nodes)} nodes, e.g. {sorted(set(names))[:3]}')
        srv.shutdown()
    finally:
        shutil.rmtree(root, ignore_errors=True)


main()
