import { test } from 'node:test';
import * as assert from 'node:assert/strict';
import type { RunSummary } from '../src/commands';
import { formatTokens, formatUsd, RunTracker, runLabel, statusView } from '../src/status';

const r = (runId: string, outcome: string, started: string, costUsd: number | null, tokens = 0, steps = 0, goal = 'g'): RunSummary =>
  ({ runId, outcome, started, costUsd, tokens, steps, goal });

test('number formats', () => {
  const usd: [number, string][] = [[0, '$0.00'], [0.004, '$0.0040'], [0.01, '$0.01'], [1.235, '$1.24'], [12, '$12.00']];
  for (const [v, want] of usd) assert.equal(formatUsd(v), want);
  assert.equal(formatUsd(null), 'cost unknown');
  const tok: [number, string][] = [[0, '0'], [999, '999'], [1234, '1.2k'], [400000, '400.0k'], [1234567, '1.2M']];
  for (const [v, want] of tok) assert.equal(formatTokens(v), want);
});

test('status bar text, tooltip and click target', () => {
  const cases: { name: string; runs: RunSummary[]; state: 'starting' | 'running' | 'stopped'; want: { text: string } }[] = [
    { name: 'stopped', runs: [], state: 'stopped', want: { text: '$(circle-slash) ioh' } },
    { name: 'starting', runs: [], state: 'starting', want: { text: '$(loading~spin) ioh' } },
    { name: 'idle, no runs', runs: [], state: 'running', want: { text: 'ioh $0.00' } },
    { name: 'idle, past runs', runs: [r('r-1', 'applied', '2026-11-29T20:00:00Z', 0.5), r('r-2', 'rejected', '2026-11-29T21:00:00Z', 0.25)], state: 'running', want: { text: 'ioh $0.75' } },
    {
      name: 'running and awaiting review',
      runs: [r('r-1', 'running', '2026-11-29T20:00:00Z', 0.1), r('r-2', 'running', '2026-11-29T21:00:00Z', 0.2), r('r-3', 'awaiting_approval', '2026-11-29T22:00:00Z', 0.3)],
      state: 'running',
      want: { text: 'ioh $(sync~spin) 2 $(eye) 1 awaiting review $0.60' },
    },
  ];
  for (const c of cases) {
    const v = statusView(c.runs, c.state);
    assert.deepEqual({ text: v.text }, { text: c.want.text }, c.name);
  }
  const v = statusView([r('r-9', 'running', '1', 0.0123, 45678, 7, 'make   ParseDuration\naccept days')], 'running');
  assert.equal(v.tooltip, [
    'ioh-lsp: 1 running, 0 awaiting review',
    'spend $0.01, 45.7k tokens over 1 runs',
    '• r-9 step 7, 45.7k tokens, $0.01: make ParseDuration accept days',
    'click: list runs',
  ].join('\n'));
});

test('an unpriced run is an unknown cost, never $0 (ioh.runs costUsd: null)', () => {
  const runs = [r('r-1', 'applied', '2026-11-29T20:00:00Z', 0.5), r('r-2', 'applied', '2026-11-29T21:00:00Z', null, 100, 2)];
  const v = statusView(runs, 'running');
  assert.equal(v.text, 'ioh $0.50+');
  assert.match(v.tooltip, /^spend \$0\.50\+ \(1 unpriced\), 100 tokens over 2 runs$/m);
  assert.equal(runLabel(runs[1]).detail, '2 steps · 100 tokens · cost unknown · started 2026-11-29T21:00:00Z');
});

test('run picker label', () => {
  assert.deepEqual(runLabel(r('r-1', 'verified', '2026-11-29T22:00:00Z', 1.5, 2500, 12, 'x'.repeat(100))), {
    label: 'x'.repeat(79) + '…',
    description: 'r-1 · verified',
    detail: '12 steps · 2.5k tokens · $1.50 · started 2026-11-29T22:00:00Z',
  });
});

test('the status follows $/progress: begin and end refresh once, reports redraw', () => {
  const t = new RunTracker();
  // The sequence the server sends for a run (lsp/progress.go), and tokens that are not ours.
  assert.equal(t.onProgress('ioh/r-1', { kind: 'begin', title: 'ioh: fix the test', message: 'run r-1' }), 'refresh');
  assert.equal(t.onProgress('ioh/r-1', { kind: 'report', message: 'step 2/40 · 2000 tokens · $0.0036 · edit_file' }), 'render');
  assert.equal(t.onProgress('other/1', { kind: 'begin', title: 'not ours' }), undefined);
  assert.equal(t.onProgress(7, { kind: 'begin', title: 'numeric token' }), undefined);
  assert.equal(t.onProgress('ioh/', { kind: 'begin' }), undefined);
  assert.deepEqual(t.runs(), [{ runId: 'r-1', title: 'ioh: fix the test', message: 'step 2/40 · 2000 tokens · $0.0036 · edit_file' }]);

  // While the run is live the status counts it even before ioh.runs lists it, and shows its step.
  const listed = [r('r-0', 'applied', '2026-11-29T20:00:00Z', 0.5)];
  const v = statusView(listed, 'running', t.runs());
  assert.equal(v.text, 'ioh $(sync~spin) 1 $0.50');
  assert.match(v.tooltip, /^• r-1 step 2\/40 · 2000 tokens · \$0\.0036 · edit_file: fix the test$/m);
  // A run listed as running and live is counted once.
  assert.equal(statusView([...listed, r('r-1', 'running', '2026-11-29T21:00:00Z', 0)], 'running', t.runs()).text, 'ioh $(sync~spin) 1 $0.50');

  assert.equal(t.onProgress('ioh/r-1', { kind: 'end', message: 'completed: awaiting_approval (run r-1, 2 steps, $0.0036)' }), 'refresh');
  assert.deepEqual(t.runs(), []);
  assert.equal(statusView([...listed, r('r-1', 'awaiting_approval', '2026-11-29T21:00:00Z', 0.0036)], 'running', t.runs()).text, 'ioh $(eye) 1 awaiting review $0.50');
});

test('a live run whose change waits for review is awaiting review, not spinning', () => {
  const t = new RunTracker();
  t.onProgress('ioh/r-1', { kind: 'begin', title: 'ioh: fix the test', message: 'run r-1' });
  t.onProgress('ioh/r-1', { kind: 'report', message: 'step 3/10 · 2000 tokens · $0.0036 · verify' });
  assert.equal(statusView([], 'running', t.runs()).text, 'ioh $(sync~spin) 1 $0.00');
  // The report the server sends when the change goes to review (lsp/reviewstate.go).
  t.onProgress('ioh/r-1', { kind: 'report', message: "awaiting review: Apply or Discard it in the editor's preview · step 3/10 · 2000 tokens · $0.0036" });
  // ioh.runs lists it awaiting_approval meanwhile: still counted once.
  const v = statusView([r('r-1', 'awaiting_approval', '2026-11-29T21:00:00Z', 0.0036)], 'running', t.runs());
  assert.equal(v.text, 'ioh $(eye) 1 awaiting review $0.0036');
  assert.match(v.tooltip, /^ioh-lsp: 0 running, 1 awaiting review$/m);
  assert.match(v.tooltip, /^• r-1 awaiting review: Apply or Discard/m);
});
