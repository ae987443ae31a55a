// Status: what the status bar item says about the runs the server reports
// (`ioh.runs`). No 'vscode' import, so it is testable with node's runner.

import type { RunSummary } from './commands';

export interface StatusView {
  /** Status bar text; `$(…)` are VS Code codicons. */
  text: string;
  tooltip: string;
}

/** A run the server reports progress for (token `ioh/<runId>`). */
export interface LiveRun {
  runId: string;
  title: string;
  message: string;
}

/** ProgressValue is the value of a work-done `$/progress`. */
export interface ProgressValue {
  kind: 'begin' | 'report' | 'end';
  title?: string;
  message?: string;
}

/**
 * RunTracker follows the server's work-done progress for its runs. The
 * status bar is driven by it: `begin` and `end` (a run started or
 * finished) call for one `ioh.runs` refresh, `report` (a step, its
 * spend) only redraws from the report's own text. Tokens not of the
 * form `ioh/<runId>` are not ours.
 */
export class RunTracker {
  private readonly live = new Map<string, LiveRun>();

  /** onProgress records the value; 'refresh' asks for one ioh.runs call, 'render' for a redraw. */
  onProgress(token: string | number, value: ProgressValue): 'refresh' | 'render' | undefined {
    if (typeof token !== 'string' || !token.startsWith('ioh/') || token.length === 4) return undefined;
    const runId = token.slice(4);
    switch (value?.kind) {
      case 'begin':
        this.live.set(runId, { runId, title: value.title ?? '', message: value.message ?? '' });
        return 'refresh';
      case 'report': {
        const r = this.live.get(runId) ?? { runId, title: '', message: '' };
        if (value.message !== undefined) r.message = value.message;
        this.live.set(runId, r);
        return 'render';
      }
      case 'end':
        this.live.delete(runId);
        return 'refresh';
      default:
        return undefined;
    }
  }

  runs(): LiveRun[] {
    return [...this.live.values()];
  }

  clear(): void {
    this.live.clear();
  }
}

/** formatUsd prints dollars with cents, or four places under a cent; null is an unknown cost. */
export function formatUsd(v: number | null): string {
  if (v === null) return 'cost unknown';
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
 * REVIEW_PREFIX starts the server's progress report while a run's
 * verified change waits for the user (docs/lsp.md#progress): such a run
 * is waiting, not working.
 */
export const REVIEW_PREFIX = 'awaiting review';

/** reviewing reports a live run whose change waits for review. */
export function reviewing(l: LiveRun): boolean {
  return l.message.startsWith(REVIEW_PREFIX);
}

/**
 * statusView summarises the runs: how many are running (by the server's
 * progress, and by the last ioh.runs), how many wait for review (a live
 * run whose progress says "awaiting review", or one listed
 * awaiting_approval or verified: no spinner for those), and the spend of
 * all listed runs. A click opens the runs list.
 */
export function statusView(runs: RunSummary[], serverState: 'starting' | 'running' | 'stopped', live: LiveRun[] = []): StatusView {
  if (serverState === 'stopped') {
    return { text: '$(circle-slash) ioh', tooltip: 'ioh-lsp is not running' };
  }
  if (serverState === 'starting') {
    return { text: '$(loading~spin) ioh', tooltip: 'ioh-lsp is starting' };
  }
  const byNewest = runs.slice().sort((a, b) => b.started.localeCompare(a.started));
  const liveIds = new Set(live.map((l) => l.runId));
  const listedRunning = byNewest.filter((r) => r.outcome === 'running' && !liveIds.has(r.runId));
  const working = live.filter((l) => !reviewing(l));
  const running = working.length + listedRunning.length;
  const waiting = live.filter(reviewing).length + byNewest.filter((r) => !liveIds.has(r.runId) && (r.outcome === 'awaiting_approval' || r.outcome === 'verified')).length;
  // A run whose cost is unknown makes the total a lower bound ("$0.75+").
  const spend = runs.reduce((s, r) => s + (r.costUsd ?? 0), 0);
  const unknown = runs.filter((r) => r.costUsd === null).length;
  const total = formatUsd(spend) + (unknown ? '+' : '');
  const tokens = runs.reduce((s, r) => s + r.tokens, 0);

  const parts: string[] = [];
  if (running) parts.push(`$(sync~spin) ${running}`);
  if (waiting) parts.push(`$(eye) ${waiting} awaiting review`);
  parts.push(total);
  const text = `ioh ${parts.join(' ')}`;

  const lines = [`ioh-lsp: ${running} running, ${waiting} awaiting review`, `spend ${total}${unknown ? ` (${unknown} unpriced)` : ''}, ${formatTokens(tokens)} tokens over ${runs.length} runs`];
  for (const l of live.slice(0, 5)) {
    lines.push(`• ${l.runId}${l.message ? ' ' + truncate(l.message, 60) : ''}${l.title ? ': ' + truncate(l.title.replace(/^ioh: /, ''), 60) : ''}`);
  }
  for (const r of listedRunning.slice(0, Math.max(0, 5 - live.length))) {
    lines.push(`• ${r.runId} step ${r.steps}, ${formatTokens(r.tokens)} tokens, ${formatUsd(r.costUsd)}: ${truncate(r.goal, 60)}`);
  }
  lines.push('click: list runs');
  return { text, tooltip: lines.join('\n') };
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
