// VS Code: a language client for `dagc --lsp`, with no dependency (VS
// Code's own client library is an npm package, and nothing here comes from
// npm). It starts the server once, sends it the .dag documents as they open
// and change, shows its diagnostics, and asks it for definitions,
// references, hovers, symbols, completions, renames and quick fixes.
// Settings: dagc.path (default "dagc"), dagc.profile, dagc.importDirs.
// docs/build-integration.md, "In your editor"; tested against the real
// server by tests/compiler/lsp_vscode.js with VS Code's API stubbed.
'use strict';
const vscode = require('vscode');
const cp = require('child_process');

class Client {
  constructor(cmd, args, cwd, options) {
    this.pending = new Map();
    this.nextId = 1;
    this.buf = Buffer.alloc(0);
    this.onNotification = () => {};
    this.proc = cp.spawn(cmd, args, { cwd, stdio: ['pipe', 'pipe', 'inherit'] });
    this.proc.on('error', (e) => this.fail(e));
    this.proc.on('exit', () => this.fail(new Error('dagc --lsp exited')));
    this.proc.stdout.on('data', (d) => this.data(d));
    this.ready = this.request('initialize', {
      processId: process.pid,
      rootUri: cwd ? vscode.Uri.file(cwd).toString() : null,
      capabilities: { general: { positionEncodings: ['utf-16'] } },
      initializationOptions: options,
    }).then(() => this.notify('initialized', {}));
  }

  fail(e) {
    for (const p of this.pending.values()) p.reject(e);
    this.pending.clear();
    this.dead = true;
  }

  data(d) {
    this.buf = Buffer.concat([this.buf, d]);
    for (;;) {
      const end = this.buf.indexOf('\r\n\r\n');
      if (end < 0) return;
      const m = /Content-Length: *(\d+)/i.exec(this.buf.slice(0, end).toString('latin1'));
      const len = m ? parseInt(m[1], 10) : 0;
      if (this.buf.length < end + 4 + len) return;
      const body = this.buf.slice(end + 4, end + 4 + len).toString('utf8');
      this.buf = this.buf.slice(end + 4 + len);
      let msg;
      try { msg = JSON.parse(body); } catch (e) { continue; }
      if (msg.id !== undefined && msg.id !== null && this.pending.has(msg.id)) {
        const p = this.pending.get(msg.id);
        this.pending.delete(msg.id);
        if (msg.error) p.reject(new Error(msg.error.message));
        else p.resolve(msg.result);
      } else if (msg.method) {
        this.onNotification(msg.method, msg.params);
      }
    }
  }

  send(msg) {
    if (this.dead) return;
    const b = Buffer.from(JSON.stringify(Object.assign({ jsonrpc: '2.0' }, msg)), 'utf8');
    this.proc.stdin.write('Content-Length: ' + b.length + '\r\n\r\n');
    this.proc.stdin.write(b);
  }

  request(method, params) {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      if (this.dead) return reject(new Error('dagc --lsp is not running'));
      this.pending.set(id, { resolve, reject });
      this.send({ id, method, params });
    });
  }

  notify(method, params) { this.send({ method, params }); }

  stop() {
    if (this.dead) return Promise.resolve();
    return this.request('shutdown').catch(() => {}).then(() => {
      this.notify('exit', {});
      this.proc.stdin.end();
    });
  }
}

// -------------------------------------------------- protocol <-> VS Code
const pos = (p) => new vscode.Position(p.line, p.character);
const range = (r) => new vscode.Range(pos(r.start), pos(r.end));
const location = (l) => new vscode.Location(vscode.Uri.parse(l.uri), range(l.range));
const docPos = (doc, p) => ({ textDocument: { uri: doc.uri.toString() },
                              position: { line: p.line, character: p.character } });
const severity = (s) => [undefined, vscode.DiagnosticSeverity.Error, vscode.DiagnosticSeverity.Warning,
                         vscode.DiagnosticSeverity.Information, vscode.DiagnosticSeverity.Hint][s]
                        || vscode.DiagnosticSeverity.Error;

function diagnostic(d) {
  const v = new vscode.Diagnostic(range(d.range), d.message, severity(d.severity));
  v.source = d.source;
  if (d.code) v.code = d.code;
  if (d.relatedInformation) {
    v.relatedInformation = d.relatedInformation.map(
      (r) => new vscode.DiagnosticRelatedInformation(location(r.location), r.message));
  }
  return v;
}

function workspaceEdit(e) {
  const w = new vscode.WorkspaceEdit();
  for (const uri of Object.keys((e && e.changes) || {}))
    for (const t of e.changes[uri]) w.replace(vscode.Uri.parse(uri), range(t.range), t.newText);
  return w;
}

const symbolKind = { 2: vscode.SymbolKind.Module, 12: vscode.SymbolKind.Function,
                     13: vscode.SymbolKind.Variable, 24: vscode.SymbolKind.Event };
function symbol(s) {
  const v = new vscode.DocumentSymbol(s.name, '', symbolKind[s.kind] || vscode.SymbolKind.Object,
                                      range(s.range), range(s.selectionRange));
  v.children = (s.children || []).map(symbol);
  return v;
}

const itemKind = { 3: vscode.CompletionItemKind.Function, 6: vscode.CompletionItemKind.Variable,
                   9: vscode.CompletionItemKind.Module, 14: vscode.CompletionItemKind.Keyword,
                   23: vscode.CompletionItemKind.Event };

// ------------------------------------------------------------ activation
let client = null;

function activate(context) {
  const cfg = vscode.workspace.getConfiguration('dagc');
  const folder = vscode.workspace.workspaceFolders && vscode.workspace.workspaceFolders[0];
  const diags = vscode.languages.createDiagnosticCollection('dagc');
  context.subscriptions.push(diags);
  client = new Client(cfg.get('path') || 'dagc', ['--lsp'], folder ? folder.uri.fsPath : undefined,
                      { profile: cfg.get('profile') || undefined, importDirs: cfg.get('importDirs') || [] });
  client.onNotification = (method, params) => {
    if (method === 'textDocument/publishDiagnostics')
      diags.set(vscode.Uri.parse(params.uri), params.diagnostics.map(diagnostic));
  };
  const isDag = (doc) => doc.languageId === 'dag';
  const open = (doc) => {
    if (!isDag(doc)) return;
    client.ready.then(() => client.notify('textDocument/didOpen', { textDocument: {
      uri: doc.uri.toString(), languageId: 'dag', version: doc.version, text: doc.getText() } }));
  };
  vscode.workspace.textDocuments.forEach(open);
  const sel = { language: 'dag' };
  const ask = (method, params, map) => client.ready.then(() => client.request(method, params))
    .then((r) => (r === null || r === undefined ? undefined : map(r)));
  context.subscriptions.push(
    vscode.workspace.onDidOpenTextDocument(open),
    vscode.workspace.onDidChangeTextDocument((e) => {
      if (!isDag(e.document)) return;
      client.ready.then(() => client.notify('textDocument/didChange', {
        textDocument: { uri: e.document.uri.toString(), version: e.document.version },
        contentChanges: [{ text: e.document.getText() }] }));
    }),
    vscode.workspace.onDidCloseTextDocument((doc) => {
      if (!isDag(doc)) return;
      client.ready.then(() => client.notify('textDocument/didClose',
                                            { textDocument: { uri: doc.uri.toString() } }));
    }),
    vscode.workspace.onDidChangeConfiguration((e) => {
      if (!e.affectsConfiguration('dagc')) return;
      const c = vscode.workspace.getConfiguration('dagc');
      client.ready.then(() => client.notify('workspace/didChangeConfiguration', { settings: { dagc: {
        profile: c.get('profile') || undefined, importDirs: c.get('importDirs') || [] } } }));
    }),
    vscode.languages.registerDefinitionProvider(sel, { provideDefinition: (doc, p) =>
      ask('textDocument/definition', docPos(doc, p), location) }),
    vscode.languages.registerReferenceProvider(sel, { provideReferences: (doc, p, ctx) =>
      ask('textDocument/references', Object.assign(docPos(doc, p),
          { context: { includeDeclaration: !!(ctx && ctx.includeDeclaration) } }), (r) => r.map(location)) }),
    vscode.languages.registerHoverProvider(sel, { provideHover: (doc, p) =>
      ask('textDocument/hover', docPos(doc, p), (h) => new vscode.Hover(
        new vscode.MarkdownString(h.contents.value), h.range ? range(h.range) : undefined)) }),
    vscode.languages.registerDocumentSymbolProvider(sel, { provideDocumentSymbols: (doc) =>
      ask('textDocument/documentSymbol', { textDocument: { uri: doc.uri.toString() } },
          (r) => r.map(symbol)) }),
    vscode.languages.registerCompletionItemProvider(sel, { provideCompletionItems: (doc, p) =>
      ask('textDocument/completion', docPos(doc, p), (r) => r.items.map((i) => {
        const c = new vscode.CompletionItem(i.label, itemKind[i.kind]);
        if (i.detail) c.detail = i.detail;
        return c;
      })) }, ' ', ',', '('),
    vscode.languages.registerRenameProvider(sel, {
      prepareRename: (doc, p) => ask('textDocument/prepareRename', docPos(doc, p),
        (r) => ({ range: range(r.range), placeholder: r.placeholder })),
      provideRenameEdits: (doc, p, name) => ask('textDocument/rename',
        Object.assign(docPos(doc, p), { newName: name }), workspaceEdit),
    }),
    vscode.languages.registerCodeActionsProvider(sel, { provideCodeActions: (doc, r) =>
      ask('textDocument/codeAction', { textDocument: { uri: doc.uri.toString() },
        range: { start: { line: r.start.line, character: r.start.character },
                 end: { line: r.end.line, character: r.end.character } },
        context: { diagnostics: [] } }, (acts) => acts.map((a) => {
        const v = new vscode.CodeAction(a.title, vscode.CodeActionKind.QuickFix);
        v.edit = workspaceEdit(a.edit);
        return v;
      })) }),
    { dispose: () => client && client.stop() });
}

function deactivate() {
  return client ? client.stop() : undefined;
}

module.exports = { activate, deactivate, Client };
