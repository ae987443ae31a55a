// Status: what the status bar item says about the runs the server reports
// (`ioh.runs`). No 'vscode' import, so it is testable with node's runner.

import type { RunSummary } from './commands';

export interface StatusView {
  /** Status bar text; `$(…)` are VS Code codicons. */
  text: string;
  tooltip: string;
  /** The run a click opens the trace of, if any. */
  traceRunId?: string;
}

/** formatUsd prints dollars with cents, or four places under a cent. */
export function formatUsd(v: number): string {
  if (v > 0 && v < 0.01) return `$${v.toFixed(4)}`;
  return `$${v.toFixed(2)}`;
}

/** formatTokens prints 1234 as 1.2k and 1234567 as 1.2M. */
export function formatTokens(n: number): string {
  if (n >= 1e6) return `${(n / 1e6).toFixed(1)}M`;
  if (n >= 1e3) return `${(n / 1e3).toFixed(1)}k`;
  return String(n);
}

/**
 * statusView summarises the runs: how many are running, how many wait for
 * approval, and the spend of all listed runs; a click opens the trace of
 * the newest running run, else the newest run.
 */
export function statusView(runs: RunSummary[], serverState: 'starting' | 'running' | 'stopped'): StatusView {
  if (serverState === 'stopped') {
    return { text: '$(circle-slash) ioh', tooltip: 'ioh-lsp is not running' };
  }
  if (serverState === 'starting') {
    return { text: '$(loading~spin) ioh', tooltip: 'ioh-lsp is starting' };
  }
  const byNewest = runs.slice().sort((a, b) => b.started.localeCompare(a.started));
  const running = byNewest.filter((r) => r.outcome === 'running');
  const waiting = byNewest.filter((r) => r.outcome === 'awaiting_approval' || r.outcome === 'verified');
  const spend = runs.reduce((s, r) => s + r.costUsd, 0);
  const tokens = runs.reduce((s, r) => s + r.tokens, 0);

  const parts: string[] = [];
  if (running.length) parts.push(`$(sync~spin) ${running.length}`);
  if (waiting.length) parts.push(`$(check) ${waiting.length}`);
  parts.push(formatUsd(spend));
  const text = `ioh ${parts.join(' ')}`;

  const lines = [`ioh-lsp: ${running.length} running, ${waiting.length} awaiting review`, `spend ${formatUsd(spend)}, ${formatTokens(tokens)} tokens over ${runs.length} runs`];
  for (const r of running.slice(0, 5)) {
    lines.push(`• ${r.runId} step ${r.steps}, ${formatTokens(r.tokens)} tokens, ${formatUsd(r.costUsd)}: ${truncate(r.goal, 60)}`);
  }
  const target = running[0] ?? byNewest[0];
  if (target) lines.push(`click: trace of ${target.runId}`);
  return { text, tooltip: lines.join('\n'), traceRunId: target?.runId };
}

/** runLabel is a quick-pick line for a run. */
export function runLabel(r: RunSummary): { label: string; description: string; detail: string } {
  return {
    label: truncate(r.goal || '(no goal)', 80),
    description: `${r.runId} · ${r.outcome}`,
    detail: `${r.steps} steps · ${formatTokens(r.tokens)} tokens · ${formatUsd(r.costUsd)} · started ${r.started}`,
  };
}

export function truncate(s: string, n: number): string {
  const one = s.replace(/\s+/g, ' ').trim();
  return one.length <= n ? one : one.slice(0, n - 1) + '…';
}

/** anyRunning says whether the status should be polled often. */
export function anyRunning(runs: RunSummary[]): boolean {
  return runs.some((r) => r.outcome === 'running');
}
