// The extension's command traffic against schema/commands.schema.json
// (generated from the server's Go declarations): every command it sends
// is declared, every argument it builds fits that command's declared
// argument, and the results it parses are the declared ones.
import { test } from 'node:test';
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import {
  askArgs, clearTraceArgs, parseRunId, parseRuns, rejectArgs, runArgs, runIdArgs, SERVER_COMMANDS, traceFile, withGoal,
} from '../src/commands';
import { DECLARED_COMMANDS, paramsErrors, requiredArgs, schemaErrors } from './schema';

const sel = { start: { line: 3, character: 0 }, end: { line: 7, character: 2 } };

/** What each argument builder of src/commands.ts produces, by name. */
const BUILT: Record<string, unknown[]> = {
  runArgs: [runArgs({ uri: 'file:///w/fix.ioh.yaml' }), runArgs({ inline: { version: 1, goal: 'g' } })],
  askArgs: [askArgs('fix it'), askArgs('fix', 'file:///w/a.go'), askArgs('fix', 'file:///w/a.go', sel), askArgs('and the docs', 'file:///w/a.go', sel, 'r-4')],
  runIdArgs: [runIdArgs(' r-1 ')],
  rejectArgs: [rejectArgs('r-1'), rejectArgs('r-1', 'too broad')],
  clearTraceArgs: [clearTraceArgs(), clearTraceArgs('r-2')],
};

/** sendSites lists each `execute('ioh.x', builder(...))` of the extension's sources. */
function sendSites(): { file: string; command: string; builder?: string }[] {
  const out: { file: string; command: string; builder?: string }[] = [];
  for (const f of fs.readdirSync('src').filter((n) => n.endsWith('.ts'))) {
    const text = fs.readFileSync(path.join('src', f), 'utf8');
    for (const m of text.matchAll(/\bexecute\(\s*'([^']+)'\s*(?:,\s*([A-Za-z]+)\()?/g)) {
      out.push({ file: f, command: m[1], builder: m[2] });
    }
    for (const m of text.matchAll(/command:\s*'(ioh\.[A-Za-z]+)'/g)) out.push({ file: f, command: m[1] });
  }
  return out;
}

test('every command the extension names is declared by the server', () => {
  for (const c of SERVER_COMMANDS) assert.ok(DECLARED_COMMANDS.includes(c), `${c} is not in schema/commands.schema.json`);
  const sites = sendSites();
  assert.ok(sites.length >= 9, `found only ${sites.length} execute sites in src/: the scan is looking in the wrong place`);
  for (const s of sites) assert.ok(DECLARED_COMMANDS.includes(s.command), `${s.file} sends ${s.command}, which the server does not declare`);
});

test('each argument the extension sends fits its command', () => {
  for (const s of sendSites()) {
    if (s.builder === undefined) {
      assert.deepEqual(requiredArgs(s.command), [], `${s.file} sends ${s.command} without an argument, but it requires one`);
      assert.equal(paramsErrors({ command: s.command, arguments: [] }), '', `${s.file}: ${s.command} with no argument`);
      continue;
    }
    const built = BUILT[s.builder];
    assert.ok(built, `${s.file} builds ${s.command}'s argument with ${s.builder}, which this test does not know`);
    for (const arg of built) {
      assert.equal(schemaErrors(`${s.command}.args`, arg), '', `${s.file}: ${s.command} ${JSON.stringify(arg)}`);
      assert.equal(paramsErrors({ command: s.command, arguments: [arg] }), '', `${s.file}: ${s.command} params`);
    }
  }
});

test('a code action ioh.ask with the typed goal still fits ioh.ask', () => {
  const fromAction = [{ uri: 'file:///w/a.go', range: sel }];
  const [arg] = withGoal(fromAction, 'make it pass');
  assert.equal(schemaErrors('ioh.ask.args', arg), '');
});

test('the schema refuses what the server refuses (control)', () => {
  assert.notEqual(schemaErrors('ioh.approve.args', {}), '', 'approve without runId');
  assert.notEqual(schemaErrors('ioh.approve.args', { runId: '' }), '', 'approve with an empty runId');
  assert.notEqual(schemaErrors('ioh.ask.args', { goal: 'g', uri: 'file:///a', range: { start: { line: -1, character: 0 }, end: sel.end } }), '', 'negative line');
  assert.notEqual(schemaErrors('ioh.run.args', { contract: 'a', inline: {} }), '', 'run with both');
  assert.notEqual(schemaErrors('ioh.reject.args', { runId: 'r-1', why: 'x' }), '', 'an unknown field');
  assert.notEqual(paramsErrors({ command: 'ioh.bogus', arguments: [] }), '', 'an undeclared command');
  assert.notEqual(paramsErrors({ command: 'ioh.cancel', arguments: [] }), '', 'cancel without its argument');
});

test('the results the extension parses are the declared ones', () => {
  const runs = [
    { runId: 'r-1', goal: 'g', outcome: 'applied', steps: 3, tokens: 1200, costUsd: 0.02, limits: { steps: 40, wall: '15m0s' }, started: '2026-11-30T10:00:00Z' },
    { runId: 'r-2', goal: 'h', outcome: 'running', steps: 0, tokens: 0, costUsd: null, started: '2026-11-30T10:01:00Z' },
  ];
  assert.equal(schemaErrors('ioh.runs.result', runs), '');
  const parsed = parseRuns(runs);
  assert.deepEqual(parsed.map((r) => r.runId), ['r-1', 'r-2']);
  assert.deepEqual(parsed.map((r) => r.costUsd), [0.02, null], 'an unknown cost stays unknown');
  assert.equal(schemaErrors('ioh.run.result', { runId: 'r-3' }), '');
  assert.equal(parseRunId({ runId: 'r-3' }), 'r-3');
  const trace = { ...runs[0], events: 9, types: { tool_call: 4 }, summary: 's', file: '/state/r-1.trace.md' };
  assert.equal(schemaErrors('ioh.trace.result', trace), '');
  assert.equal(traceFile(trace), '/state/r-1.trace.md');
});
