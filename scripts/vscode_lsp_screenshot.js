#!/usr/bin/env node
// Draws docs/img/vscode-lsp-*.png: VS Code (code-server, VS Code built
// for the browser, run headless here) with the extension of
// grammar/editors/vscode/ copied into its extensions folder as the
// README there says, against the real `dagc --lsp`, on a two-file project
// with an error. Headless Chromium, driven by Playwright, types into it
// as a user would and checks what VS Code shows before each picture:
//
//   vscode-lsp-diagnostic.png  the unknown name underlined, its message
//                              with the "did you mean" in the hover
//   vscode-lsp-hover.png       the hover of a task: waits, clauses, cost
//   vscode-lsp-definition.png  Peek Definition (Ctrl+Shift+F10) on `run physics`:
//                              the graph in physics.dag, the imported file
//
// It also checks, unpictured, that F12 opens physics.dag at the graph,
// that the quick fix (Ctrl+.) writes the "did you mean" and clears the
// error, and that F2 renames a resource in both files.
//
// A manual step, not in any test suite (nothing here is a Debian package):
//   CODE_SERVER=/path/to/bin/code-server PLAYWRIGHT_CORE=/path/to/playwright-core \
//     node scripts/vscode_lsp_screenshot.js build/dagc/dagc [OUTDIR]
// CODE_SERVER defaults to `code-server` on PATH, PLAYWRIGHT_CORE to
// `playwright-core` as Node resolves it, CHROMIUM to /usr/bin/chromium.
// Exits 77 with a message when one of them is missing; fails (exit 1)
// when VS Code does not show what a picture is for.
'use strict';
const cp = require('child_process');
const fs = require('fs');
const net = require('net');
const os = require('os');
const path = require('path');

const skip = (why) => { console.log('vscode_lsp_screenshot: skipped: ' + why); process.exit(77); };
const fail = (why) => { console.error('vscode_lsp_screenshot: ' + why); process.exitCode = 1; };

const root = path.resolve(__dirname, '..');
if (process.argv.length < 3) {
  console.error('usage: node scripts/vscode_lsp_screenshot.js DAGC [OUTDIR]');
  process.exit(2);
}
const dagc = path.resolve(process.argv[2]);
const outDir = path.resolve(process.argv[3] || path.join(root, 'docs', 'img'));
if (!fs.existsSync(dagc)) { console.error('vscode_lsp_screenshot: no ' + dagc); process.exit(2); }

function which(cmd) {
  if (cmd.includes('/')) return fs.existsSync(cmd) ? cmd : null;
  for (const d of (process.env.PATH || '').split(':')) {
    const p = path.join(d, cmd);
    if (d && fs.existsSync(p)) return p;
  }
  return null;
}
const codeServer = which(process.env.CODE_SERVER || 'code-server');
if (!codeServer) skip('no code-server (set CODE_SERVER; `npm install code-server`, docs/build-integration.md)');
const chromiumPath = which(process.env.CHROMIUM || '/usr/bin/chromium');
if (!chromiumPath) skip('no chromium (Debian package chromium)');
let chromium;
try {
  ({ chromium } = require(process.env.PLAYWRIGHT_CORE || 'playwright-core'));
} catch (e) {
  skip('no playwright-core (set PLAYWRIGHT_CORE to its folder; npm package playwright-core)');
}

// The project: frame.dag imports physics.dag and misspells `input`.
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'vscode-lsp-'));
const proj = path.join(tmp, 'game');
fs.mkdirSync(proj);
fs.writeFileSync(path.join(proj, 'physics.dag'),
  '// physics.dag\nresource bodies;\ngraph physics(struct game *) {\n' +
  '    task integrate after prev collide writes bodies cost 2ms;\n' +
  '    task collide after integrate reads bodies cost 500us;\n}\n');
fs.writeFileSync(path.join(proj, 'frame.dag'),
  '// frame.dag\nimport "physics.dag";\n\ngraph frame(struct game *) {\n' +
  '    task input on main;\n' +
  '    task phys after inptu, prev render run physics;\n' +
  '    task hud on main cost 300us;\n' +
  '    gate done = phys and hud;\n' +
  '    task render after done on main reads bodies cost 4ms;\n' +
  '    task present after render on main;\n}\n');

// VS Code's user settings and the extension, installed by copying the
// folder (grammar/editors/README.md, "VS Code").
const userData = path.join(tmp, 'user-data');
const extDir = path.join(tmp, 'extensions');
fs.mkdirSync(path.join(userData, 'User'), { recursive: true });
fs.writeFileSync(path.join(userData, 'User', 'settings.json'), JSON.stringify({
  'dagc.path': dagc,
  'workbench.startupEditor': 'none',
  'workbench.tips.enabled': false,
  'workbench.colorTheme': 'Default Dark Modern',
  'window.commandCenter': false,
  'editor.minimap.enabled': false,
  'editor.fontSize': 14,
  'editor.hover.delay': 100,
  'telemetry.telemetryLevel': 'off',
  'security.workspace.trust.enabled': false,
  'chat.commandCenter.enabled': false,
  'chat.disableAIFeatures': true,
}, null, 2));
fs.cpSync(path.join(root, 'grammar', 'editors', 'vscode'), path.join(extDir, 'dagc-dag'), { recursive: true });

function freePort() {
  return new Promise((resolve) => {
    const s = net.createServer();
    s.listen(0, '127.0.0.1', () => { const p = s.address().port; s.close(() => resolve(p)); });
  });
}

async function main() {
  const port = await freePort();
  const log = fs.openSync(path.join(tmp, 'code-server.log'), 'w');
  const server = cp.spawn(codeServer, ['--auth', 'none', '--bind-addr', '127.0.0.1:' + port,
    '--disable-telemetry', '--disable-update-check', '--disable-workspace-trust',
    '--disable-getting-started-override', '--user-data-dir', userData, '--extensions-dir', extDir,
    '--config', path.join(tmp, 'config.yaml'), proj],
  { stdio: ['ignore', log, log], env: Object.assign({}, process.env, { XDG_CONFIG_HOME: tmp }),
    detached: true });
  let browser, page;
  try {
    // code-server's HTTP server first
    for (let i = 0; ; i++) {
      const up = await new Promise((resolve) => {
        const c = net.connect(port, '127.0.0.1', () => { c.end(); resolve(true); });
        c.on('error', () => resolve(false));
      });
      if (up) break;
      if (i > 120) throw new Error('code-server did not listen (' + path.join(tmp, 'code-server.log') + ')');
      await new Promise((r) => setTimeout(r, 500));
    }
    browser = await chromium.launch({ executablePath: chromiumPath, args: ['--no-sandbox', '--disable-gpu'] });
    page = await browser.newPage({ viewport: { width: 1000, height: 430 } });
    page.setDefaultTimeout(60000);
    await page.goto('http://127.0.0.1:' + port + '/?folder=' + encodeURIComponent(proj));
    await page.waitForSelector('.monaco-workbench .part.editor', { timeout: 120000 });
    await page.waitForTimeout(2000);
    await page.keyboard.press('Control+B');  // the side bar off: more room for the text

    const open = async (name) => {
      await page.keyboard.press('Control+P');
      await page.waitForSelector('.quick-input-widget input');
      await page.keyboard.type(name, { delay: 20 });
      // Enter once the list has caught up with the typing (it first shows
      // the recently opened files)
      await page.locator('.quick-input-list .monaco-list-row.focused').filter({ hasText: name })
        .waitFor({ timeout: 20000 });
      await page.keyboard.press('Enter');
      await page.waitForSelector('.tab.active[aria-label*="' + name + '"]');
      await page.waitForTimeout(500);
    };
    const goTo = async (line, col) => {
      await page.keyboard.press('Control+G');
      await page.waitForSelector('.quick-input-widget input');
      await page.keyboard.type(line + ':' + col);
      await page.keyboard.press('Enter');
      await page.waitForTimeout(300);
    };
    const hover = async (want) => {  // Ctrl+K Ctrl+I: the hover at the cursor
      await page.keyboard.press('Control+K');
      await page.keyboard.press('Control+I');
      const h = page.locator('.monaco-hover:not(.hidden)').filter({ hasText: want });
      await h.first().waitFor({ state: 'visible', timeout: 20000 });
      await page.waitForTimeout(600);
      return h.first().innerText();
    };
    const shot = async (name) => {
      await page.mouse.move(999, 429);  // no stray hover from the pointer
      const file = path.join(outDir, name);
      await page.screenshot({ path: file });
      console.log(file);
    };
    fs.mkdirSync(outDir, { recursive: true });

    // 1. The diagnostic: squiggle, then its hover with the message.
    await open('frame.dag');
    await page.waitForSelector('.squiggly-error', { timeout: 60000 });
    await goTo(6, 22);
    const diag = await hover('inptu');
    if (!/did you mean/.test(diag)) fail('the diagnostic hover has no "did you mean": ' + diag);
    await shot('vscode-lsp-diagnostic.png');
    await page.keyboard.press('Escape');

    // 2. The hover of a task (render: waits for the gate `done`).
    await goTo(9, 11);
    const h = await hover('render');
    if (!/done/.test(h) || !/4ms|4 ms/.test(h)) fail('the hover of render lacks its wait or cost: ' + h);
    await shot('vscode-lsp-hover.png');
    await page.keyboard.press('Escape');

    // 3. Peek (Ctrl+Shift+F10 on Linux) on `physics` in `run physics`: the imported file's
    // graph inside frame.dag; then F12 opens physics.dag there.
    await goTo(6, 47);
    await page.keyboard.press('Control+Shift+F10');
    const peek = page.locator('.peekview-widget').filter({ hasText: 'physics.dag' });
    await peek.first().waitFor({ state: 'visible', timeout: 30000 });
    await page.waitForTimeout(800);
    await shot('vscode-lsp-definition.png');
    await page.keyboard.press('Escape');
    await page.waitForTimeout(300);
    await page.keyboard.press('F12');
    await page.waitForSelector('.tab.active[aria-label*="physics.dag"]', { timeout: 30000 });
    await page.waitForTimeout(500);
    const cur = await page.locator('[id="status.editor.selection"]').innerText();
    if (!/Ln 3\b/.test(cur)) fail('F12 landed at ' + cur + ', not on line 3 of physics.dag');

    // Not pictured: the quick fix (Ctrl+.) turns inptu into input and the
    // error goes; F2 renames the resource in both files.
    const text = () => page.locator('.editor-group-container.active .view-lines').innerText();
    await open('frame.dag');
    await goTo(6, 22);
    await page.keyboard.press('Control+.');
    await page.locator('.action-widget').filter({ hasText: 'input' }).first().waitFor({ timeout: 20000 });
    await page.keyboard.press('Enter');
    await page.waitForFunction(() => document.querySelectorAll('.squiggly-error').length === 0,
                               null, { timeout: 30000 });
    if (!/after input,/.test((await text()).replace(/\s+/g, ' ')))
      fail('the quick fix did not write `input`: ' + await text());
    await goTo(9, 42);
    await page.keyboard.press('F2');
    await page.waitForSelector('.rename-box input.rename-input');  // focused, the old name selected
    await page.waitForTimeout(500);
    await page.keyboard.type('world');
    await page.keyboard.press('Enter');
    await page.waitForTimeout(1500);
    if (!/reads world/.test((await text()).replace(/\s+/g, ' ')))
      fail('F2 did not rename bodies in frame.dag: ' + await text());
    await open('physics.dag');
    const phys = (await text()).replace(/\s+/g, ' ');
    if (!/resource world;/.test(phys) || !/writes world/.test(phys) || /bodies/.test(phys))
      fail('F2 did not rename bodies in physics.dag: ' + phys);
    if (!process.exitCode) console.log('vscode_lsp_screenshot: diagnostics, hover, peek, F12, quick fix and F2 checked');
  } finally {
    if (process.exitCode && page) await page.screenshot({ path: path.join(tmp, 'failure.png') }).catch(() => {});
    if (browser) await browser.close();
    try { process.kill(-server.pid, 'SIGTERM'); } catch (e) { /* already gone */ }
    if (!process.exitCode) fs.rmSync(tmp, { recursive: true, force: true });
    else console.error('vscode_lsp_screenshot: left ' + tmp + ' (code-server.log there)');
  }
}

main().catch((e) => { fail(e.stack || String(e)); });
