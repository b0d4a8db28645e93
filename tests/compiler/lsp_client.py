"""A small JSON-RPC client for `dagc --lsp` (tests/compiler/lsp_protocol.py
and bench/compiler/lsp_latency.py): frames messages, keeps notifications
apart from replies, and gives up after a deadline instead of hanging."""
import json
import os
import subprocess
import threading
import time


class Client:
    def __init__(self, dagc, timeout=60):
        self.p = subprocess.Popen([dagc, '--lsp'], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE)
        self.next_id = 1
        self.notes = []          # notifications received, in order
        # A server that stops answering fails the test, never hangs it.
        self.watchdog = threading.Timer(timeout, self.p.kill)
        self.watchdog.daemon = True
        self.watchdog.start()

    def raw(self, data):
        self.p.stdin.write(data)
        self.p.stdin.flush()

    def send(self, obj):
        b = json.dumps(obj).encode()
        self.raw(b'Content-Length: %d\r\n\r\n' % len(b) + b)

    def read(self):
        n = None
        while True:
            line = self.p.stdout.readline()
            if not line:
                raise EOFError('the server closed its output (exit status %s)' % self.p.poll())
            if line in (b'\r\n', b'\n'):
                break
            if line.lower().startswith(b'content-length:'):
                n = int(line.split(b':')[1])
        return json.loads(self.p.stdout.read(n))

    def request(self, method, params=None):
        rid = self.next_id
        self.next_id += 1
        msg = {'jsonrpc': '2.0', 'id': rid, 'method': method}
        if params is not None:
            msg['params'] = params
        self.send(msg)
        return self.reply(rid)

    def reply(self, rid):
        while True:
            m = self.read()
            if 'method' in m and 'id' not in m:
                self.notes.append(m)
                continue
            if m.get('id') != rid:
                raise AssertionError('reply to %r while waiting for %r: %r' % (m.get('id'), rid, m))
            return m

    def notify(self, method, params):
        self.send({'jsonrpc': '2.0', 'method': method, 'params': params})

    def diagnostics(self, uri):
        """Waits for the next publishDiagnostics of uri."""
        for i, m in enumerate(self.notes):
            if m['method'] == 'textDocument/publishDiagnostics' and m['params']['uri'] == uri:
                del self.notes[i]
                return m['params']['diagnostics']
        while True:
            m = self.read()
            if m.get('method') == 'textDocument/publishDiagnostics' and m['params']['uri'] == uri:
                return m['params']['diagnostics']
            if 'method' in m:
                self.notes.append(m)

    def change(self, u, text, version=2):
        """Replaces u's text and returns the diagnostics published for it
        (the last ones, once a request behind the change is answered)."""
        self.notes = [m for m in self.notes if m.get('params', {}).get('uri') != u]
        self.notify('textDocument/didChange', {'textDocument': {'uri': u, 'version': version},
                                               'contentChanges': [{'text': text}]})
        return self.settle(u)

    def settle(self, u):
        """The last diagnostics published for u before a request's answer."""
        self.request('textDocument/documentSymbol', {'textDocument': {'uri': u}})
        got = None
        for m in self.notes:
            if m['method'] == 'textDocument/publishDiagnostics' and m['params']['uri'] == u:
                got = m['params']['diagnostics']
        self.notes = [m for m in self.notes if m.get('params', {}).get('uri') != u]
        return got

    def close(self):
        try:
            self.p.stdin.close()
        except OSError:
            pass
        rc = self.p.wait()
        self.watchdog.cancel()
        return rc


def uri(path):
    return 'file://' + os.path.abspath(path)


def now():
    return time.perf_counter()
