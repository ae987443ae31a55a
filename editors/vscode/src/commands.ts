// Commands: the argument objects of the ioh.* commands (docs/lsp.md#commands) and the checks
// on what the server returns. No 'vscode' import: the extension's UI gathers
// the inputs and these functions shape them.

import { AskArgs, ClearTraceArgs, Command, CommandArgs, COMMANDS, Position, Range, RejectArgs, RunArgs, RunRef } from './api.generated';

// The commands and their argument types are generated from the server's
// declarations (lsp/api, `go run ./internal/schemagen`): tsc refuses an
// argument that does not fit its command.
export type { AskArgs, ClearTraceArgs, CommandArgs, Position, Range, RejectArgs, RunArgs };

/** The server's commands (workspace/executeCommand), docs/lsp.md#commands. */
export const SERVER_COMMANDS = COMMANDS;
export type ServerCommand = Command;
export type RunIdArgs = RunRef;

/** RunSummary is one element of the `ioh.runs` result. */
export interface RunSummary {
  runId: string;
  goal: string;
  outcome: string;
  steps: number;
  tokens: number;
  /** null: a call could not be priced, the cost is unknown (never $0). */
  costUsd: number | null;
  started: string;
}

export class ArgumentError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ArgumentError';
  }
}

/** runArgs names a contract file by URI, or passes an inline contract. */
export function runArgs(target: { uri: string } | { inline: unknown }): RunArgs {
  if ('uri' in target) {
    if (target.uri.trim() === '') throw new ArgumentError('run: no task file given');
    return { contract: target.uri };
  }
  if (target.inline === null || typeof target.inline !== 'object') {
    throw new ArgumentError('run: an inline contract must be an object');
  }
  return { inline: target.inline };
}

/**
 * askArgs builds `ioh.ask`: the goal, the document and, when the selection
 * is not empty, its range.
 */
export function askArgs(goal: string, uri?: string, selection?: Range, runId?: string): AskArgs {
  const g = goal.trim();
  if (g === '') throw new ArgumentError('ask: the goal is empty');
  const out: AskArgs = { goal: g };
  if (uri) {
    out.uri = uri;
    if (selection && !isEmptyRange(selection)) out.range = selection;
  }
  const id = runId?.trim();
  if (id) out.runId = id;
  return out;
}

/**
 * AskTarget is one row of "Ask agent…"'s first pick: a new task (no
 * runId) or a follow-up in a run's conversation (docs/lsp.md#follow-ups).
 */
export interface AskTarget {
  label: string;
  description?: string;
  detail?: string;
  runId?: string;
}

export const NEW_TASK: AskTarget = { label: 'New task', description: 'a fresh run' };

/**
 * askTargets lists what an ask can go to: a new task first, then the runs
 * a follow-up can continue, newest first. Empty when there is no such run
 * (the ask then asks for the goal straight away).
 */
export function askTargets(runs: RunSummary[]): AskTarget[] {
  const follow = pickableRuns(runs, 'followUp');
  if (follow.length === 0) return [];
  return [NEW_TASK, ...follow.map((r) => ({
    label: `Follow up on ${r.runId}`,
    description: r.goal,
    detail: `${r.outcome}: the agent continues this run's conversation`,
    runId: r.runId,
  }))];
}

/** AskUI is what "Ask agent…" needs of the editor: a pick and an input box. */
export interface AskUI {
  pick(items: AskTarget[], title: string): Promise<AskTarget | undefined>;
  input(title: string): Promise<string | undefined>;
}

/**
 * askFlow gathers an ask: where it goes (runId given, picked among
 * askTargets(runs), or a new task) and its goal; askArgs shapes the
 * request from them. Undefined: the user dismissed a step.
 */
export async function askFlow(ui: AskUI, runs: RunSummary[], at: { selection?: Range; runId?: string }): Promise<{ goal: string; runId?: string } | undefined> {
  let runId = at.runId;
  if (!runId) {
    const targets = askTargets(runs);
    if (targets.length > 0) {
      const t = await ui.pick(targets, 'ioh: ask the agent: a new task or a follow-up?');
      if (!t) return undefined;
      runId = t.runId;
    }
  }
  const about = at.selection && !isEmptyRange(at.selection) ? ' about the selection' : '';
  const goal = await ui.input(runId ? `Follow up on ${runId}${about}` : `Ask agent${about}`);
  if (!goal?.trim()) return undefined;
  return runId ? { goal, runId } : { goal };
}

export function isEmptyRange(r: Range): boolean {
  return r.start.line === r.end.line && r.start.character === r.end.character;
}

export function runIdArgs(runId: string): RunIdArgs {
  const id = runId.trim();
  if (id === '') throw new ArgumentError('no run id given');
  return { runId: id };
}

export function rejectArgs(runId: string, reason?: string): RejectArgs {
  const out: RejectArgs = runIdArgs(runId);
  const r = reason?.trim();
  if (r) out.reason = r;
  return out;
}

export function clearTraceArgs(runId?: string): ClearTraceArgs {
  const id = runId?.trim();
  return id ? { runId: id } : {};
}

/** needsGoal reports whether an ioh.ask argument (from a code action) lacks a goal. */
export function needsGoal(args: unknown[]): boolean {
  const a = args[0] as Record<string, unknown> | undefined;
  return a === undefined || a === null || typeof a !== 'object' || typeof a.goal !== 'string' || a.goal.trim() === '';
}

/** withGoal returns the code action's ioh.ask arguments with the typed goal filled in. */
export function withGoal(args: unknown[], goal: string): unknown[] {
  const a = (args[0] && typeof args[0] === 'object' ? args[0] : {}) as Record<string, unknown>;
  const uri = typeof a.uri === 'string' ? a.uri : undefined;
  const range = isRange(a.range) ? a.range : undefined;
  return [{ ...a, ...askArgs(goal, uri, range) }, ...args.slice(1)];
}

function isRange(v: unknown): v is Range {
  const r = v as Range | undefined;
  return !!r && isPos(r.start) && isPos(r.end);
}

function isPos(v: unknown): v is Position {
  const p = v as Position | undefined;
  return !!p && Number.isInteger(p.line) && Number.isInteger(p.character);
}

/** parseRunId reads `{runId}` from ioh.run / ioh.ask results. */
export function parseRunId(result: unknown): string {
  const r = result as { runId?: unknown } | null;
  if (!r || typeof r !== 'object' || typeof r.runId !== 'string' || r.runId === '') {
    throw new ArgumentError(`the server answered without a runId: ${JSON.stringify(result)}`);
  }
  return r.runId;
}

/** parseRuns checks the `ioh.runs` result; null means no runs. */
export function parseRuns(result: unknown): RunSummary[] {
  if (result === null || result === undefined) return [];
  if (!Array.isArray(result)) throw new ArgumentError(`ioh.runs: want an array, got ${typeof result}`);
  return result.map((v: unknown, i: number): RunSummary => {
    const o = v as Record<string, unknown>;
    if (!o || typeof o !== 'object' || typeof o.runId !== 'string') {
      throw new ArgumentError(`ioh.runs[${i}]: no runId`);
    }
    return {
      runId: o.runId,
      goal: typeof o.goal === 'string' ? o.goal : '',
      outcome: typeof o.outcome === 'string' ? o.outcome : 'unknown',
      steps: numberOr0(o.steps),
      tokens: numberOr0(o.tokens),
      costUsd: typeof o.costUsd === 'number' && Number.isFinite(o.costUsd) ? o.costUsd : null,
      started: typeof o.started === 'string' ? o.started : '',
    };
  });
}

function numberOr0(v: unknown): number {
  return typeof v === 'number' && Number.isFinite(v) ? v : 0;
}

/** The runs a picker offers for each action, by outcome (docs/contract.md#outcomes). */
const PICKABLE: Record<string, readonly string[] | 'all'> = {
  approve: ['verified', 'unverified', 'awaiting_approval'],
  reject: ['verified', 'unverified', 'awaiting_approval'],
  cancel: ['running', 'awaiting_approval'],
  resume: ['awaiting_approval', 'interrupted', 'cancelled', 'budget_exceeded', 'provider_failed', 'stalled', 'running'],
  trace: 'all',
  clearTrace: 'all',
  // A run still working refuses a follow-up (docs/lsp.md#follow-ups).
  followUp: ['awaiting_approval', 'verified', 'unverified', 'verification_failed', 'applied', 'rejected', 'stalled', 'denied',
    'cancelled', 'provider_failed', 'budget_exceeded', 'interrupted'],
};

export type PickAction = keyof typeof PICKABLE;

/** pickableRuns lists the runs an action applies to, newest first. */
export function pickableRuns(runs: RunSummary[], action: PickAction): RunSummary[] {
  const want = PICKABLE[action];
  const list = want === 'all' ? runs.slice() : runs.filter((r) => want.includes(r.outcome));
  return list.sort((a, b) => b.started.localeCompare(a.started));
}

/**
 * TaskFileRule is the server's rule for task files: globs on the path
 * relative to a workspace folder (`/`-separated), as the server sends them
 * in its initialize result under `experimental.ioh.taskFiles`.
 */
export interface TaskFileRule { globs: string[] }

/** FALLBACK_TASK_RULE is used until the server has sent its rule (or when an older server sends none). */
export const FALLBACK_TASK_RULE: TaskFileRule = { globs: ['**/*.ioh.yaml', '**/*.ioh.yml', '.ioh/tasks/**'] };

/** taskFileRule reads the rule from an initialize result; undefined when it has none. */
export function taskFileRule(initResult: unknown): TaskFileRule | undefined {
  const tf = (initResult as { capabilities?: { experimental?: { ioh?: { taskFiles?: { globs?: unknown } } } } } | null | undefined)
    ?.capabilities?.experimental?.ioh?.taskFiles;
  const g = tf?.globs;
  if (!Array.isArray(g) || g.length === 0 || !g.every((x) => typeof x === 'string' && x !== '')) return undefined;
  return { globs: g as string[] };
}

/**
 * globToRegExp compiles a glob: `*` and `?` stay inside one path segment,
 * `**/` is zero or more segments, a trailing `/**` is anything below.
 */
export function globToRegExp(glob: string): RegExp {
  let re = '';
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i];
    if (c === '*' && glob[i + 1] === '*') {
      if (glob[i + 2] === '/') {
        re += '(?:.*/)?';
        i += 2;
      } else {
        // A trailing "/**" needs something below the directory.
        re += i + 2 === glob.length && re.endsWith('/') ? '.+' : '.*';
        i += 1;
      }
    } else if (c === '*') {
      re += '[^/]*';
    } else if (c === '?') {
      re += '[^/]';
    } else {
      re += c.replace(/[.+^${}()|[\]\\]/g, '\\$&');
    }
  }
  return new RegExp(`^${re}$`);
}

/**
 * isTaskFile reports whether a file gets "Run task": relPath is its path
 * relative to its workspace folder (undefined: in no folder, never a task
 * file for the server either).
 */
export function isTaskFile(relPath: string | undefined, rule: TaskFileRule = FALLBACK_TASK_RULE): boolean {
  if (relPath === undefined || relPath === '') return false;
  const p = relPath.replace(/\\/g, '/').replace(/^\.\//, '');
  if (p.startsWith('../') || p.startsWith('/')) return false;
  return rule.globs.some((g) => globToRegExp(g).test(p));
}

/** traceFile is the rendered trace file the server wrote, if it names one. */
export function traceFile(result: unknown): string | undefined {
  const f = (result as { file?: unknown } | null)?.file;
  return typeof f === 'string' && f !== '' ? f : undefined;
}

/** formatTrace renders an ioh.trace result for an output channel. */
export function formatTrace(result: unknown): string {
  if (typeof result === 'string') return result;
  if (result === null || result === undefined) return '(empty trace)';
  return JSON.stringify(result, null, 2);
}

/**
 * refusalMessage is what the user reads when the server refuses a command
 * (its error names the file, line and fix): "ioh: the task did not start: …".
 */
export function refusalMessage(command: string, err: unknown): string {
  // The client prefixes the method; the server, the command's name.
  const why = (err instanceof Error ? err.message : String(err)).replace(/^workspace\/executeCommand: /, '');
  const verb = command === 'ioh.run' ? 'the task did not start' : `${command} failed`;
  return `ioh: ${verb}: ${why.replace(new RegExp(`^${command.replace('.', '\\.')}: `), '')}`;
}
