// The VS Code path against the real server: this extension's capabilities,
// initializationOptions and command arguments, over stdio with
// vscode-languageserver-protocol (the wire layer vscode-languageclient
// uses). A verified change must arrive as one annotated workspace/applyEdit.
import { test } from 'node:test';
import * as assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import {
  ApplyWorkspaceEditParams, createProtocolConnection, StreamMessageReader, StreamMessageWriter, TextEdit,
} from 'vscode-languageserver-protocol/node';
import { ensureReviewCapabilities } from '../src/capabilities';
import { askArgs, isTaskFile, parseRunId, parseRuns, runIdArgs, taskFileRule, traceFile } from '../src/commands';
import { initializationOptions, serverConfig } from '../src/settings';
import { DECLARED_COMMANDS, paramsErrors, schemaErrors, settingsErrors } from './schema';

const FIXTURE = path.resolve('..', 'neovim', 'test', 'fixture', 'calc');

function serverBinary(): string | undefined {
  const p = process.env.IOH_LSP || path.resolve('..', '..', 'bin', 'ioh-lsp');
  return fs.existsSync(p) ? p : undefined;
}

/** applyEdits applies LSP text edits (UTF-16 positions) to a text. */
function applyEdits(text: string, edits: TextEdit[]): string {
  const lines = text.split('\n');
  const offset = (l: number, c: number) => lines.slice(0, l).reduce((n, s) => n + s.length + 1, 0) + c;
  const sorted = edits.slice().sort((a, b) => offset(b.range.start.line, b.range.start.character) - offset(a.range.start.line, a.range.start.character));
  let out = text;
  for (const e of sorted) {
    out = out.slice(0, offset(e.range.start.line, e.range.start.character)) + e.newText + out.slice(offset(e.range.end.line, e.range.end.character));
  }
  return out;
}

test('ioh.ask ends in one annotated applyEdit the refactor preview can show', { timeout: 300_000 }, async (t) => {
  const bin = serverBinary();
  if (!bin) {
    t.skip('no ioh-lsp binary: set IOH_LSP or run `make build` at the top level first');
    return;
  }
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ioh-vscode-wire-'));
  t.after(() => fs.rmSync(tmp, { recursive: true, force: true }));
  const ws = path.join(tmp, 'calc');
  fs.cpSync(FIXTURE, ws, { recursive: true });
  const file = path.join(ws, 'calc.go');
  const uri = pathToFileURL(file).toString();
  const before = fs.readFileSync(file, 'utf8');

  const settings: Record<string, unknown> = { 'model.provider': 'replay', 'model.cassette': path.join(ws, 'cassette.json'), approve: 'ask' };
  const get = (k: string) => settings[k];

  const child = spawn(bin, ['serve'], { cwd: ws, env: { ...process.env, IOH_STATE_DIR: path.join(tmp, 'state') }, stdio: ['pipe', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (d) => (stderr += d));
  const conn = createProtocolConnection(new StreamMessageReader(child.stdout), new StreamMessageWriter(child.stdin));
  // Ending: close stdin (the server exits at EOF), then SIGKILL whatever is left.
  t.after(async () => {
    conn.dispose();
    child.stdin.end();
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGKILL');
      await exited;
    }
  });

  let resolveEdit: (p: ApplyWorkspaceEditParams) => void = () => undefined;
  const edited = new Promise<ApplyWorkspaceEditParams>((r) => (resolveEdit = r));
  let progress = 0;
  let configured = 0;
  conn.onRequest('workspace/configuration', (p: { items: { section?: string }[] }) => {
    const cfg = serverConfig(get);
    assert.equal(settingsErrors(cfg), '', `the ioh section ${JSON.stringify(cfg)} fits schema/settings.schema.json`);
    configured++;
    return p.items.map((i) => (i.section === 'ioh' ? cfg : null));
  });
  conn.onRequest('window/workDoneProgress/create', () => null);
  conn.onNotification('$/progress', () => void progress++);
  conn.onRequest('window/showMessageRequest', () => null);
  conn.onNotification('window/showMessage', () => undefined);
  conn.onNotification('window/logMessage', () => undefined);
  conn.onNotification('textDocument/publishDiagnostics', () => undefined);
  conn.onRequest('workspace/applyEdit', (p: ApplyWorkspaceEditParams) => {
    resolveEdit(p);
    return { applied: true };
  });
  conn.onRequest('client/registerCapability', () => null);
  conn.onRequest('workspace/codeLens/refresh', () => null);
  conn.onRequest('window/showDocument', () => ({ success: true }));
  conn.listen();

  const caps = ensureReviewCapabilities({ workspace: { configuration: true, workspaceFolders: true } });
  assert.equal(settingsErrors(initializationOptions(get).ioh), '', 'initializationOptions.ioh fits schema/settings.schema.json');
  const init = await conn.sendRequest('initialize', {
    processId: process.pid,
    rootUri: pathToFileURL(ws).toString(),
    workspaceFolders: [{ uri: pathToFileURL(ws).toString(), name: 'calc' }],
    capabilities: caps,
    initializationOptions: initializationOptions(get),
  }) as { capabilities: { executeCommandProvider?: { commands: string[] } } };
  assert.deepEqual(init.capabilities.executeCommandProvider?.commands, DECLARED_COMMANDS, 'the server offers exactly the commands schema/commands.schema.json declares');
  // Every command sent and every result received must fit the schema.
  const execute = async (command: string, args: unknown[]): Promise<unknown> => {
    assert.equal(paramsErrors({ command, arguments: args }), '', `${command} ${JSON.stringify(args)} fits the schema`);
    const res = await conn.sendRequest('workspace/executeCommand', { command, arguments: args });
    assert.equal(schemaErrors(`${command}.result`, res), '', `${command}'s result ${JSON.stringify(res)} fits the schema`);
    return res;
  };
  // The task-file rule the server sends is the one its lenses follow.
  const rule = taskFileRule(init);
  assert.ok(rule, `initialize result carries experimental.ioh.taskFiles: ${JSON.stringify(init.capabilities)}`);
  for (const rel of ['fix.ioh.yaml', 'sub/x.ioh.yml', '.ioh/tasks/a.yaml', 'fix.ioh.json', 'sub/.ioh/tasks/a.yaml', 'calc.go', 'ioh.yaml']) {
    const lenses = await conn.sendRequest('textDocument/codeLens', { textDocument: { uri: pathToFileURL(path.join(ws, rel)).toString() } }) as { command?: { title: string; command: string; arguments?: unknown[] } }[] | null;
    for (const l of lenses ?? []) {
      if (l.command) assert.equal(paramsErrors({ command: l.command.command, arguments: l.command.arguments }), '', `${rel}: the lens ${JSON.stringify(l.command)} fits the schema`);
    }
    const serverRuns = (lenses ?? []).some((l) => l.command?.title.includes('Run task'));
    assert.equal(isTaskFile(rel, rule), serverRuns, `${rel}: the client's isTaskFile agrees with the server's Run task lens`);
  }
  await conn.sendNotification('initialized', {});
  await conn.sendNotification('textDocument/didOpen', { textDocument: { uri, languageId: 'go', version: 1, text: before } });

  let runId: string;
  try {
    runId = parseRunId(await execute('ioh.ask', [askArgs('make the failing test in calc_test.go pass', uri)]));
  } catch (err) {
    assert.fail(`ioh.ask: ${err instanceof Error ? err.message : String(err)}\nserver stderr:\n${stderr}`);
  }

  const p = await edited;
  const anns = p.edit.changeAnnotations ?? {};
  assert.ok(Object.keys(anns).length > 0, 'the edit carries change annotations');
  for (const a of Object.values(anns)) assert.equal(a.needsConfirmation, true, `annotation ${a.label} needs confirmation`);
  const docEdits = (p.edit.documentChanges ?? []).filter((c): c is Extract<typeof c, { textDocument: unknown }> => 'textDocument' in c);
  assert.equal(docEdits.length, 1, 'one document edited');
  assert.equal(docEdits[0].textDocument.uri, uri);
  for (const e of docEdits[0].edits) {
    const id = (e as { annotationId?: string }).annotationId;
    assert.ok(id !== undefined && id in anns, `edit references a defined annotation (${id})`);
  }
  assert.equal(applyEdits(before, docEdits[0].edits as TextEdit[]), before.replace('return a - b', 'return a + b'));
  assert.equal(fs.readFileSync(file, 'utf8'), before, 'the server wrote nothing itself before the editor applied');
  assert.ok(progress > 0, 'the run reported $/progress');
  assert.ok(configured > 0, 'the server pulled the ioh section');

  let outcome = 'running';
  // awaiting_approval while the editor holds the review (docs/lsp.md#commands).
  const inFlight = (o: string) => o === 'running' || o === 'verified' || o === 'awaiting_approval';
  while (inFlight(outcome)) {
    const runs = parseRuns(await execute('ioh.runs', []));
    outcome = runs.find((r) => r.runId === runId)?.outcome ?? 'missing';
    if (inFlight(outcome)) await new Promise((r) => setTimeout(r, 100));
  }
  assert.equal(outcome, 'applied');
  const trace = await execute('ioh.trace', [runIdArgs(runId)]);
  const traced = traceFile(trace);
  assert.ok(traced && fs.readFileSync(traced, 'utf8').includes(runId), `ioh.trace names a rendered trace of ${runId}: ${JSON.stringify(trace)}`);

  // A follow-up on the applied run ("Ask agent…", follow up on it): the
  // server starts a new run linked to it, its first event the user's turn.
  const followGoal = 'now also document Add';
  const next = parseRunId(await execute('ioh.ask', [askArgs(followGoal, uri, undefined, runId)]));
  assert.notEqual(next, runId, 'a follow-up on an applied run starts a new run');
  // Its trace is read once it has ended (the cassette has no turn left for it).
  while ((parseRuns(await execute('ioh.runs', [])).find((r) => r.runId === next)?.outcome ?? 'running') === 'running') {
    await new Promise((r) => setTimeout(r, 100));
  }
  const nextTrace = traceFile(await execute('ioh.trace', [runIdArgs(next)]));
  const nextText = nextTrace ? fs.readFileSync(nextTrace, 'utf8') : '';
  assert.ok(nextText.includes(followGoal) && nextText.includes(runId), `the follow-up's trace names its goal and the run it follows:\n${nextText}`);

  await conn.sendRequest('shutdown');
  await conn.sendNotification('exit');
});
