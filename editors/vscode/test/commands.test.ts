import { test } from 'node:test';
import * as assert from 'node:assert/strict';
import {
  ArgumentError, askArgs, askFlow, AskTarget, askTargets, NEW_TASK, clearTraceArgs, FALLBACK_TASK_RULE, formatTrace, globToRegExp, traceFile, isTaskFile, taskFileRule, needsGoal, parseRunId, parseRuns,
  pickableRuns, refusalMessage, rejectArgs, runArgs, runIdArgs, RunSummary, SERVER_COMMANDS, withGoal,
} from '../src/commands';

const sel = (l1: number, c1: number, l2: number, c2: number) => ({ start: { line: l1, character: c1 }, end: { line: l2, character: c2 } });

test('command names (docs/lsp.md#commands; generated from the server)', () => {
  assert.deepEqual([...SERVER_COMMANDS], ['ioh.run', 'ioh.ask', 'ioh.approve', 'ioh.reject', 'ioh.cancel', 'ioh.resume', 'ioh.trace', 'ioh.runs', 'ioh.clearTrace', 'ioh.showDiff', 'ioh.allowOnce']);
});

test('command arguments', () => {
  const cases: { name: string; got: () => unknown; want: unknown }[] = [
    { name: 'run file', got: () => runArgs({ uri: 'file:///w/fix.ioh.yaml' }), want: { contract: 'file:///w/fix.ioh.yaml' } },
    { name: 'run inline', got: () => runArgs({ inline: { version: 1, goal: 'g' } }), want: { inline: { version: 1, goal: 'g' } } },
    { name: 'ask bare', got: () => askArgs('  fix it  '), want: { goal: 'fix it' } },
    { name: 'ask file, empty selection', got: () => askArgs('fix', 'file:///w/a.go', sel(3, 4, 3, 4)), want: { goal: 'fix', uri: 'file:///w/a.go' } },
    { name: 'ask selection', got: () => askArgs('fix', 'file:///w/a.go', sel(3, 0, 7, 2)), want: { goal: 'fix', uri: 'file:///w/a.go', range: sel(3, 0, 7, 2) } },
    { name: 'ask range without uri dropped', got: () => askArgs('fix', undefined, sel(1, 0, 2, 0)), want: { goal: 'fix' } },
    { name: 'ask follow-up', got: () => askArgs('now the docs', 'file:///w/a.go', sel(3, 0, 7, 2), ' r-4 '), want: { goal: 'now the docs', uri: 'file:///w/a.go', range: sel(3, 0, 7, 2), runId: 'r-4' } },
    { name: 'ask blank run id is a new task', got: () => askArgs('fix', undefined, undefined, '  '), want: { goal: 'fix' } },
    { name: 'approve', got: () => runIdArgs(' r-1 '), want: { runId: 'r-1' } },
    { name: 'reject no reason', got: () => rejectArgs('r-1', '  '), want: { runId: 'r-1' } },
    { name: 'reject reason', got: () => rejectArgs('r-1', 'too broad'), want: { runId: 'r-1', reason: 'too broad' } },
    { name: 'clear all', got: () => clearTraceArgs(), want: {} },
    { name: 'clear one', got: () => clearTraceArgs('r-2'), want: { runId: 'r-2' } },
  ];
  for (const c of cases) assert.deepEqual(c.got(), c.want, c.name);
});

test('bad command arguments', () => {
  for (const f of [() => askArgs('   '), () => runIdArgs(''), () => runArgs({ uri: '' }), () => runArgs({ inline: 'goal: x' }), () => rejectArgs(' ')]) {
    assert.throws(f, ArgumentError);
  }
});

test('code action ioh.ask without a goal gets the typed one', () => {
  const fromAction = [{ uri: 'file:///w/a.go', range: sel(1, 0, 4, 0) }];
  assert.equal(needsGoal(fromAction), true);
  assert.equal(needsGoal([]), true);
  assert.equal(needsGoal([{ goal: 'x' }]), false);
  assert.deepEqual(withGoal(fromAction, 'explain this'), [{ goal: 'explain this', uri: 'file:///w/a.go', range: sel(1, 0, 4, 0) }]);
  assert.deepEqual(withGoal([], 'explain'), [{ goal: 'explain' }]);
});

test('results from the server', () => {
  assert.equal(parseRunId({ runId: 'r-7' }), 'r-7');
  assert.throws(() => parseRunId({}), /without a runId/);
  assert.throws(() => parseRunId(null), /without a runId/);
  assert.deepEqual(parseRuns(null), []);
  assert.deepEqual(parseRuns([{ runId: 'r-1', goal: 'g', outcome: 'running', steps: 3, tokens: 1200, costUsd: 0.02, started: '2026-11-29T22:00:00Z' }, { runId: 'r-2' }]), [
    { runId: 'r-1', goal: 'g', outcome: 'running', steps: 3, tokens: 1200, costUsd: 0.02, started: '2026-11-29T22:00:00Z' },
    { runId: 'r-2', goal: '', outcome: 'unknown', steps: 0, tokens: 0, costUsd: null, started: '' },
  ]);
  assert.throws(() => parseRuns({ runs: [] }), /want an array/);
  assert.throws(() => parseRuns([{ id: 'r-1' }]), /ioh.runs\[0\]: no runId/);
  assert.equal(traceFile({ runId: 'r-1', file: '/state/r-1.trace.md' }), '/state/r-1.trace.md');
  assert.equal(traceFile({ runId: 'r-1' }), undefined);
  assert.equal(traceFile(null), undefined);
  assert.equal(formatTrace('plain'), 'plain');
  assert.equal(formatTrace({ a: 1 }), '{\n  "a": 1\n}');
  assert.equal(formatTrace(null), '(empty trace)');
});

test('pickers offer runs by outcome, newest first', () => {
  const r = (runId: string, outcome: string, started: string): RunSummary => ({ runId, outcome, started, goal: '', steps: 0, tokens: 0, costUsd: 0 });
  const runs = [r('a', 'applied', '1'), r('b', 'running', '2'), r('c', 'awaiting_approval', '3'), r('d', 'verified', '4'), r('e', 'cancelled', '5'), r('f', 'interrupted', '6')];
  const ids = (xs: RunSummary[]) => xs.map((x) => x.runId);
  assert.deepEqual(ids(pickableRuns(runs, 'approve')), ['d', 'c']);
  assert.deepEqual(ids(pickableRuns(runs, 'cancel')), ['c', 'b']);
  assert.deepEqual(ids(pickableRuns(runs, 'resume')), ['f', 'e', 'c', 'b']);
  assert.deepEqual(ids(pickableRuns(runs, 'trace')), ['f', 'e', 'd', 'c', 'b', 'a']);
});

test('task files follow the server\'s rule (experimental.ioh.taskFiles)', () => {
  // The rule the server sends; the paths are relative to a workspace folder.
  const rule = taskFileRule({ capabilities: { experimental: { ioh: { taskFiles: { globs: ['**/*.ioh.yaml', '**/*.ioh.yml', '.ioh/tasks/**'] } } } } });
  assert.ok(rule);
  const cases: [string | undefined, boolean][] = [
    ['fix.ioh.yaml', true], ['sub/dir/fix.ioh.yml', true], ['.ioh/tasks/a.yaml', true], ['.ioh/tasks/nested/a.md', true], ['.ioh\\tasks\\a.json', true],
    ['./fix.ioh.yaml', true], ['.ioh.yaml', true],
    // What the old client rule took and the server does not:
    ['fix.ioh.json', false], ['sub/.ioh/tasks/a.yaml', false],
    ['.ioh/tasks/', false], ['.ioh/config.yaml', false], ['main.go', false], ['ioh.yaml', false], ['fix.ioh.yaml.bak', false],
    ['../other/fix.ioh.yaml', false], [undefined, false], ['', false],
  ];
  for (const [p, want] of cases) assert.equal(isTaskFile(p, rule), want, String(p));
  assert.deepEqual(FALLBACK_TASK_RULE, rule, 'the fallback is the server\'s current rule');
  // Another rule from a server is used as sent.
  const other = taskFileRule({ capabilities: { experimental: { ioh: { taskFiles: { globs: ['tasks/*.json', 'a?c.t'] } } } } });
  assert.deepEqual([isTaskFile('tasks/x.json', other), isTaskFile('tasks/x/y.json', other), isTaskFile('abc.t', other), isTaskFile('fix.ioh.yaml', other)], [true, false, true, false]);
  for (const bad of [null, {}, { capabilities: {} }, { capabilities: { experimental: { ioh: { taskFiles: { globs: [] } } } } }, { capabilities: { experimental: { ioh: { taskFiles: { globs: [1] } } } } }]) {
    assert.equal(taskFileRule(bad), undefined, JSON.stringify(bad));
  }
  assert.equal(globToRegExp('a.b+(c)').test('a.b+(c)'), true, 'regexp characters are literal');
  assert.equal(globToRegExp('a.b').test('axb'), false);
});

test('a refused command reads as what did not happen and why', () => {
  const err = new Error('ioh.run: /w/bad.ioh.yaml:4:10: budget.steps: want an integer, got string "many"');
  assert.equal(refusalMessage('ioh.run', err), 'ioh: the task did not start: /w/bad.ioh.yaml:4:10: budget.steps: want an integer, got string "many"');
  assert.equal(refusalMessage('ioh.approve', new Error('approve r-1: run has no change awaiting approval')), 'ioh: ioh.approve failed: approve r-1: run has no change awaiting approval');
  assert.equal(refusalMessage('ioh.run', 'start run: cassette /x.json: outside'), 'ioh: the task did not start: start run: cassette /x.json: outside');
  assert.equal(refusalMessage('ioh.run', new Error('workspace/executeCommand: start run: cassette /x.json: outside')), 'ioh: the task did not start: start run: cassette /x.json: outside');
});

/** fakeAskUI answers the pick with the row choose() selects and the input box with goal, recording both. */
function fakeAskUI(choose: (items: AskTarget[]) => AskTarget | undefined, goal: string | undefined) {
  const seen: { picks: AskTarget[][]; inputs: string[] } = { picks: [], inputs: [] };
  return {
    seen,
    ui: {
      pick: async (items: AskTarget[]) => { seen.picks.push(items); return choose(items); },
      input: async (title: string) => { seen.inputs.push(title); return goal; },
    },
  };
}

test('"Ask agent…" follows up on a picked run: ioh.ask carries its runId', async () => {
  const r = (runId: string, outcome: string, started: string, goal = ''): RunSummary => ({ runId, outcome, started, goal, steps: 0, tokens: 0, costUsd: 0 });
  const runs = [r('r-1', 'applied', '1', 'fix mean'), r('r-2', 'running', '2', 'busy'), r('r-3', 'awaiting_approval', '3', 'add median')];
  const targets = askTargets(runs);
  // A running run refuses a follow-up, so it is not offered; newest first.
  assert.deepEqual(targets.map((t) => t.runId), [undefined, 'r-3', 'r-1']);
  assert.deepEqual(targets[0], NEW_TASK);
  assert.equal(targets[1].label, 'Follow up on r-3');
  assert.equal(targets[1].description, 'add median');

  const follow = fakeAskUI((items) => items.find((t) => t.runId === 'r-3'), ' also test it ');
  const asked = await askFlow(follow.ui, runs, { selection: sel(1, 0, 2, 0) });
  assert.ok(asked);
  // What ui.ts sends: askArgs of what the flow gathered.
  assert.deepEqual(askArgs(asked.goal, 'file:///w/a.go', sel(1, 0, 2, 0), asked.runId), { goal: 'also test it', uri: 'file:///w/a.go', range: sel(1, 0, 2, 0), runId: 'r-3' });
  assert.deepEqual(follow.seen.inputs, ['Follow up on r-3 about the selection']);

  const fresh = fakeAskUI((items) => items[0], 'fix it');
  assert.deepEqual(await askFlow(fresh.ui, runs, {}), { goal: 'fix it' }, 'a new task has no runId');
  assert.deepEqual(fresh.seen.inputs, ['Ask agent']);

  // No run to follow up on: no pick, the goal is asked for at once.
  const none = fakeAskUI(() => assert.fail('no pick without runs'), 'fix it');
  assert.deepEqual(await askFlow(none.ui, [r('r-2', 'running', '2')], {}), { goal: 'fix it' });
  assert.equal(none.seen.picks.length, 0);

  // A run id given (a command argument) skips the pick.
  const given = fakeAskUI(() => assert.fail('no pick with a run given'), 'more');
  assert.deepEqual(await askFlow(given.ui, runs, { runId: 'r-1' }), { goal: 'more', runId: 'r-1' });

  // Dismissed pick or empty goal: nothing is sent.
  assert.equal(await askFlow(fakeAskUI(() => undefined, 'x').ui, runs, {}), undefined);
  assert.equal(await askFlow(fakeAskUI((items) => items[1], '  ').ui, runs, {}), undefined);
});
