import { test } from 'node:test';
import * as assert from 'node:assert/strict';
import type { RunSummary } from '../src/commands';
import { anyRunning, formatTokens, formatUsd, runLabel, statusView } from '../src/status';

const r = (runId: string, outcome: string, started: string, costUsd: number, tokens = 0, steps = 0, goal = 'g'): RunSummary =>
  ({ runId, outcome, started, costUsd, tokens, steps, goal });

test('number formats', () => {
  const usd: [number, string][] = [[0, '$0.00'], [0.004, '$0.0040'], [0.01, '$0.01'], [1.235, '$1.24'], [12, '$12.00']];
  for (const [v, want] of usd) assert.equal(formatUsd(v), want);
  const tok: [number, string][] = [[0, '0'], [999, '999'], [1234, '1.2k'], [400000, '400.0k'], [1234567, '1.2M']];
  for (const [v, want] of tok) assert.equal(formatTokens(v), want);
});

test('status bar text, tooltip and click target', () => {
  const cases: { name: string; runs: RunSummary[]; state: 'starting' | 'running' | 'stopped'; want: { text: string; traceRunId?: string } }[] = [
    { name: 'stopped', runs: [], state: 'stopped', want: { text: '$(circle-slash) ioh' } },
    { name: 'starting', runs: [], state: 'starting', want: { text: '$(loading~spin) ioh' } },
    { name: 'idle, no runs', runs: [], state: 'running', want: { text: 'ioh $0.00' } },
    { name: 'idle, past runs', runs: [r('r-1', 'applied', '2026-11-29T20:00:00Z', 0.5), r('r-2', 'rejected', '2026-11-29T21:00:00Z', 0.25)], state: 'running', want: { text: 'ioh $0.75', traceRunId: 'r-2' } },
    {
      name: 'running and awaiting review',
      runs: [r('r-1', 'running', '2026-11-29T20:00:00Z', 0.1), r('r-2', 'running', '2026-11-29T21:00:00Z', 0.2), r('r-3', 'awaiting_approval', '2026-11-29T22:00:00Z', 0.3)],
      state: 'running',
      want: { text: 'ioh $(sync~spin) 2 $(check) 1 $0.60', traceRunId: 'r-2' },
    },
  ];
  for (const c of cases) {
    const v = statusView(c.runs, c.state);
    assert.deepEqual({ text: v.text, traceRunId: v.traceRunId }, { text: c.want.text, traceRunId: c.want.traceRunId }, c.name);
  }
  const v = statusView([r('r-9', 'running', '1', 0.0123, 45678, 7, 'make   ParseDuration\naccept days')], 'running');
  assert.equal(v.tooltip, [
    'ioh-lsp: 1 running, 0 awaiting review',
    'spend $0.01, 45.7k tokens over 1 runs',
    '• r-9 step 7, 45.7k tokens, $0.01: make ParseDuration accept days',
    'click: trace of r-9',
  ].join('\n'));
});

test('run picker label and polling', () => {
  assert.deepEqual(runLabel(r('r-1', 'verified', '2026-11-29T22:00:00Z', 1.5, 2500, 12, 'x'.repeat(100))), {
    label: 'x'.repeat(79) + '…',
    description: 'r-1 · verified',
    detail: '12 steps · 2.5k tokens · $1.50 · started 2026-11-29T22:00:00Z',
  });
  assert.equal(anyRunning([r('a', 'applied', '', 0)]), false);
  assert.equal(anyRunning([r('a', 'applied', '', 0), r('b', 'running', '', 0)]), true);
});
