// The VS Code extension's language client (grammar/editors/vscode/
// extension.js) against the real `dagc --lsp`, under Node with VS Code's
// API stubbed (no VS Code here): the extension is activated, a two-file
// project's main.dag is opened and edited through the stub's events, and
// each provider it registered is called as VS Code calls it.
// usage: node lsp_vscode.js DAGC EXTENSION_DIR SCRATCH_DIR
'use strict';
const fs = require('fs');
const path = require('path');
const Module = require('module');

const [dagc, extDir, scratch] = process.argv.slice(2).map((p) => path.resolve(p));
const failures = [];
const check = (cond, what) => { if (!cond) { failures.push(what); console.log('FAIL: ' + what); } };

// ------------------------------------------------------- VS Code's API, stubbed
class Position { constructor(line, character) { this.line = line; this.character = character; } }
class Range { constructor(start, end) { this.start = start; this.end = end; } }
class Uri {
  constructor(s) { this.s = s; this.fsPath = decodeURIComponent(s.replace(/^file:\/\//, '')); }
  static file(p) { return new Uri('file://' + p.split('/').map(encodeURIComponent).join('/')); }
  static parse(s) { return new Uri(s); }
  toString() { return this.s; }
}
const providers = {};
const handlers = {};
const diagnostics = new Map();
const on = (name) => (f) => { handlers[name] = f; return { dispose() {} }; };
const register = (name) => (sel, p) => { providers[name] = p; return { dispose() {} }; };
const vscode = {
  Position, Range, Uri,
  Location: class { constructor(uri, range) { this.uri = uri; this.range = range; } },
  Diagnostic: class { constructor(range, message, severity) { Object.assign(this, { range, message, severity }); } },
  DiagnosticRelatedInformation: class { constructor(location, message) { Object.assign(this, { location, message }); } },
  DiagnosticSeverity: { Error: 0, Warning: 1, Information: 2, Hint: 3 },
  WorkspaceEdit: class {
    constructor() { this.edits = []; }
    replace(uri, range, text) { this.edits.push({ uri: uri.toString(), range, text }); }
  },
  DocumentSymbol: class { constructor(name, detail, kind, range, sel) { Object.assign(this, { name, kind, range, sel }); } },
  SymbolKind: { Module: 1, Function: 11, Variable: 12, Event: 23, Object: 18 },
  CompletionItem: class { constructor(label, kind) { Object.assign(this, { label, kind }); } },
  CompletionItemKind: { Function: 2, Variable: 5, Module: 8, Keyword: 13, Event: 22 },
  Hover: class { constructor(contents, range) { Object.assign(this, { contents, range }); } },
  MarkdownString: class { constructor(value) { this.value = value; } },
  CodeAction: class { constructor(title, kind) { Object.assign(this, { title, kind }); } },
  CodeActionKind: { QuickFix: 'quickfix' },
  languages: {
    createDiagnosticCollection: () => ({ set: (uri, d) => diagnostics.set(uri.toString(), d), dispose() {} }),
    registerDefinitionProvider: register('definition'),
    registerReferenceProvider: register('references'),
    registerHoverProvider: register('hover'),
    registerDocumentSymbolProvider: register('symbols'),
    registerCompletionItemProvider: register('completion'),
    registerRenameProvider: register('rename'),
    registerCodeActionsProvider: register('codeAction'),
  },
  workspace: {
    getConfiguration: () => ({ get: (k) => (k === 'path' ? dagc : undefined) }),
    workspaceFolders: [{ uri: Uri.file(scratch) }],
    textDocuments: [],
    onDidOpenTextDocument: on('open'),
    onDidChangeTextDocument: on('change'),
    onDidCloseTextDocument: on('close'),
    onDidChangeConfiguration: on('config'),
  },
};
const load = Module._load;
Module._load = function (req) { return req === 'vscode' ? vscode : load.apply(this, arguments); };

// ----------------------------------------------------------------- the test
fs.rmSync(scratch, { recursive: true, force: true });
fs.mkdirSync(scratch, { recursive: true });
fs.writeFileSync(path.join(scratch, 'b.dag'), 'resource bodies;\n' +
  'graph physics(struct game *) {\n' +
  '    task integrate after prev collide writes bodies cost 2ms;\n' +
  '    task collide after integrate reads bodies;\n' +
  '}\n');
const MAIN = 'import "b.dag";\n' +
  'graph frame(struct game *) {\n' +
  '    task input on main;\n' +
  '    task phys after inptu, prev render run physics;\n' +
  '    task hud on main;\n' +
  '    gate done = phys and hud;\n' +
  '    task render after done on main reads bodies;\n' +
  '}\n';
fs.writeFileSync(path.join(scratch, 'main.dag'), MAIN);
const mainUri = Uri.file(path.join(scratch, 'main.dag'));
const bUri = Uri.file(path.join(scratch, 'b.dag'));
const doc = { uri: mainUri, languageId: 'dag', version: 1, text: MAIN, getText() { return this.text; } };
const at = (line, word) => new Position(line, doc.text.split('\n')[line].indexOf(word) + 1);

const until = (cond, what) => new Promise((resolve) => {
  const t0 = Date.now();
  const poll = () => {
    if (cond()) return resolve(true);
    if (Date.now() - t0 > 10000) { check(false, 'timed out waiting for ' + what); return resolve(false); }
    setTimeout(poll, 20);
  };
  poll();
});

async function main() {
  const ext = require(path.join(extDir, 'extension.js'));
  const context = { subscriptions: [] };
  ext.activate(context);
  for (const p of ['definition', 'references', 'hover', 'symbols', 'completion', 'rename', 'codeAction'])
    check(providers[p], 'the extension registers a ' + p + ' provider');
  handlers.open(doc);
  const diag = () => diagnostics.get(mainUri.toString());
  await until(() => diag() && diag().length === 1, 'the diagnostic of inptu');
  check(diag()[0].message.includes("unknown name 'inptu'") && diag()[0].range.start.line === 3,
        'the diagnostic: ' + JSON.stringify(diag()));
  const fixes = await providers.codeAction.provideCodeActions(doc, new Range(new Position(3, 0), new Position(3, 0)));
  check(fixes.length === 1 && fixes[0].edit.edits[0].text === 'input', 'the quick fix: ' + JSON.stringify(fixes));
  doc.text = MAIN.replace('inptu', 'input');
  doc.version = 2;
  handlers.change({ document: doc });
  await until(() => diag() && diag().length === 0, 'the diagnostics to clear');
  const def = await providers.definition.provideDefinition(doc, at(3, 'physics'));
  check(def && def.uri.toString() === bUri.toString() && def.range.start.line === 1,
        'definition of physics in b.dag: ' + JSON.stringify(def));
  const h = await providers.hover.provideHover(doc, at(6, 'render'));
  check(h && h.contents.value.includes('waits for: `done`'), 'hover: ' + JSON.stringify(h));
  const refs = await providers.references.provideReferences(doc, at(6, 'bodies'), { includeDeclaration: true });
  check(refs && refs.length === 4, 'references of bodies: ' + (refs && refs.length));
  const syms = await providers.symbols.provideDocumentSymbols(doc);
  check(syms && syms[0].name === 'frame' && syms[0].children.length === 5, 'symbols: ' + JSON.stringify(syms));
  const prep = await providers.rename.prepareRename(doc, at(6, 'bodies'));
  check(prep && prep.placeholder === 'bodies', 'prepareRename: ' + JSON.stringify(prep));
  const edit = await providers.rename.provideRenameEdits(doc, at(6, 'bodies'), 'rigid');
  const files = new Set(edit.edits.map((e) => e.uri));
  check(edit.edits.length === 4 && files.has(bUri.toString()) && files.has(mainUri.toString()),
        'rename across both files: ' + JSON.stringify(edit.edits));
  doc.text = MAIN.replace('inptu', 'input').replace('reads bodies', 'reads ');
  handlers.change({ document: doc });
  const items = await providers.completion.provideCompletionItems(doc, new Position(6, doc.text.split('\n')[6].length - 1));
  check(items && items.some((i) => i.label === 'bodies'), 'completion after reads: ' + JSON.stringify(items));
  let failed = false;
  await providers.rename.provideRenameEdits(doc, at(2, 'input'), 'after').catch(() => { failed = true; });
  check(failed, 'a rename to a keyword is refused');
  await ext.deactivate(); // shutdown, exit: the server is gone (or Node would not exit)
}

main().then(() => {
  if (failures.length) { console.log(failures.length + ' failures'); process.exit(1); }
  console.log('ok');
  process.exit(0);
}, (e) => { console.log('FAIL: ' + (e && e.stack)); process.exit(1); });
