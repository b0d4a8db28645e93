#!/usr/bin/env python3
"""Edit-to-diagnostics latency of `dagc --lsp` on a generated graph
(gen_graph.py's default shape): opens the file, then sends whole-text
changes, each breaking one name (an error) or restoring it, and times
from the change's last byte written to its publishDiagnostics read; the
error edits must report the broken name. Beside it, `dagc --check` on the
same file, timed the same way, as the floor (the server runs that front
end plus the conversion of its diagnostics).

usage: lsp_latency.py [DAGC] [--sizes N,N] [--edits E] [--timeout S]
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, '..', '..', 'tests', 'compiler'))
from lsp_client import Client, uri  # noqa: E402


def cpu_of(pid):
    """User + system CPU seconds of a running process, or None."""
    try:
        f = open('/proc/%d/stat' % pid).read().rsplit(')', 1)[1].split()
        return (int(f[11]) + int(f[12])) / os.sysconf('SC_CLK_TCK')
    except (OSError, ValueError, IndexError):
        return None


def children_cpu():
    t = os.times()
    return t.children_user + t.children_system


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('dagc', nargs='?', default='build/dagc/dagc')
    ap.add_argument('--sizes', default='100000', help='nodes, comma-separated')
    ap.add_argument('--edits', type=int, default=10, help='changes timed per size')
    ap.add_argument('--timeout', type=float, default=300)
    a = ap.parse_args()
    dagc = os.path.abspath(a.dagc)
    print('%8s %10s %10s %10s %10s %10s %10s %8s' % ('nodes', 'edit med', 'edit max', 'check med', 'ratio',
                                                   'edit cpu', 'check cpu', 'bytes'))
    with tempfile.TemporaryDirectory() as tmp:
        for n in [int(s) for s in a.sizes.split(',')]:
            path = os.path.join(tmp, 'g%d.dag' % n)
            with open(path, 'w') as f:
                subprocess.run([sys.executable, os.path.join(here, 'gen_graph.py'), str(n), '1'],
                               stdout=f, check=True)
            text = open(path).read()
            # a task name that other tasks wait for: the last word of an `after`
            at = text.index(' after ') + 7
            name = text[at:].split()[0].rstrip(',;')
            broken = text[:at] + name + 'zz' + text[at + len(name):]
            c = Client(dagc, timeout=a.timeout)
            c.request('initialize', {'capabilities': {}})
            u = uri(path)
            c.notify('textDocument/didOpen', {'textDocument': {'uri': u, 'languageId': 'dag',
                                                              'version': 1, 'text': text}})
            first = [x for x in c.diagnostics(u) if x['severity'] == 1]
            if first:
                sys.exit('lsp_latency: the generated graph has errors: %r' % first[:2])
            times = []
            cpu0 = cpu_of(c.p.pid)
            for e in range(a.edits):
                bad = e % 2 == 0
                t0 = time.perf_counter()
                c.notify('textDocument/didChange', {'textDocument': {'uri': u, 'version': e + 2},
                                                    'contentChanges': [{'text': broken if bad else text}]})
                d = c.diagnostics(u)
                times.append(time.perf_counter() - t0)
                if bad != any(name + 'zz' in x['message'] for x in d):
                    sys.exit('lsp_latency: edit %d: wrong diagnostics %r' % (e, d[:2]))
            cpu1 = cpu_of(c.p.pid)
            c.request('shutdown')
            c.notify('exit', {})
            c.close()
            checks = []
            ch0 = children_cpu()
            nchk = max(3, a.edits // 2)
            for _ in range(nchk):
                t0 = time.perf_counter()
                subprocess.run([dagc, '--check', path], stderr=subprocess.DEVNULL, check=True)
                checks.append(time.perf_counter() - t0)
            ch1 = children_cpu()
            med, chk = statistics.median(times), statistics.median(checks)
            ecpu = '%8.1fms' % ((cpu1 - cpu0) / a.edits * 1e3) if cpu0 is not None and cpu1 is not None else '-'
            print('%8d %8.1fms %8.1fms %8.1fms %10.2f %10s %8.1fms %8d' % (
                n, med * 1e3, max(times) * 1e3, chk * 1e3, med / chk, ecpu,
                (ch1 - ch0) / nchk * 1e3, len(text)))


if __name__ == '__main__':
    main()
