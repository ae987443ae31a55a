// UI: the palette commands. Each gathers its inputs (input box, quick pick,
// the active editor) and sends the matching ioh.* server command.

import * as path from 'node:path';
import * as vscode from 'vscode';
import {
  askArgs, askFlow, clearTraceArgs, formatTrace, isTaskFile, parseRunId, pickableRuns, PickAction,
  rejectArgs, runArgs, runIdArgs, traceFile,
} from './commands';
import type { Controller } from './controller';
import { DEFAULT_KEY_ENV, isKeyEnvName, readModel } from './settings';
import { runLabel } from './status';
import { getter } from './controller';

type Handler = (...args: unknown[]) => Promise<void>;

function guard(fn: Handler): Handler {
  return async (...args) => {
    try {
      await fn(...args);
    } catch (err) {
      void vscode.window.showErrorMessage(`ioh: ${err instanceof Error ? err.message : String(err)}`);
    }
  };
}

/** pickRun returns the run id given as an argument, or asks for one. */
async function pickRun(ctl: Controller, action: PickAction, given: unknown): Promise<string | undefined> {
  if (typeof given === 'string' && given !== '') return given;
  const runs = pickableRuns(await ctl.listRuns(), action);
  if (runs.length === 0) {
    void vscode.window.showInformationMessage(`ioh: no run to ${action}`);
    return undefined;
  }
  const pick = await vscode.window.showQuickPick(runs.map((r) => ({ ...runLabel(r), runId: r.runId })), {
    title: `ioh: ${action}`, matchOnDescription: true,
  });
  return pick?.runId;
}

/** relPath is uri's path relative to its workspace folder, or undefined outside every folder. */
function relPath(uri: vscode.Uri): string | undefined {
  const folder = vscode.workspace.getWorkspaceFolder(uri);
  if (!folder) return undefined;
  return path.posix.relative(folder.uri.path, uri.path);
}

/** started tells which run the command started (a follow-up: which run its turn went to). */
function started(result: unknown, followed?: string): void {
  const id = parseRunId(result);
  const what = !followed ? `started run ${id}` : id === followed ? `follow-up sent to run ${id}` : `follow-up on ${followed} started run ${id}`;
  void vscode.window.showInformationMessage(`ioh: ${what}`, 'Show trace').then((c) => {
    if (c) void vscode.commands.executeCommand('ioh-lsp.trace', id);
  });
}

export function registerCommands(context: vscode.ExtensionContext, ctl: Controller): void {
  const traceDoc = async (runId: string): Promise<void> => {
    const res = await ctl.execute('ioh.trace', runIdArgs(runId));
    const file = traceFile(res);
    if (file) {
      // The server wrote the rendered trace (and opened it when it could).
      await vscode.window.showTextDocument(vscode.Uri.file(file), { preview: true });
      return;
    }
    const doc = await vscode.workspace.openTextDocument({ content: formatTrace(res), language: typeof res === 'string' ? 'plaintext' : 'json' });
    await vscode.window.showTextDocument(doc, { preview: true });
  };

  const cmds: Record<string, Handler> = {
    'ioh-lsp.run': async (arg) => {
      let uri = arg instanceof vscode.Uri ? arg : undefined;
      const active = vscode.window.activeTextEditor?.document.uri;
      if (!uri && active && isTaskFile(relPath(active), ctl.taskRule)) uri = active;
      if (!uri) {
        const picked = await vscode.window.showOpenDialog({ title: 'Run task contract', canSelectMany: false, filters: { 'Task contracts': ['yaml', 'yml', 'json'] } });
        uri = picked?.[0];
      }
      // A file given or picked goes to the server as it is: ioh.run checks
      // the contract itself.
      if (!uri) return;
      started(await ctl.execute('ioh.run', runArgs({ uri: uri.toString() })));
    },
    'ioh-lsp.ask': async (arg) => {
      const ed = vscode.window.activeTextEditor;
      const sel = ed?.selection;
      const given = typeof arg === 'string' && arg !== '' ? arg : undefined;
      const range = sel && { start: { line: sel.start.line, character: sel.start.character }, end: { line: sel.end.line, character: sel.end.character } };
      const asked = await askFlow({
        pick: async (items, title) => vscode.window.showQuickPick(items, { title, matchOnDescription: true }),
        input: async (title) => vscode.window.showInputBox({
          title,
          prompt: 'What should the agent do?',
          placeHolder: 'e.g. make the failing test in this file pass',
          ignoreFocusOut: true,
        }),
      }, given ? [] : await ctl.listRuns(), { selection: range, runId: given });
      if (!asked) return;
      started(await ctl.execute('ioh.ask', askArgs(asked.goal, ed?.document.uri.toString(), range, asked.runId)), asked.runId);
    },
    'ioh-lsp.approve': async (arg) => {
      const id = await pickRun(ctl, 'approve', arg);
      if (id) await ctl.execute('ioh.approve', runIdArgs(id));
    },
    'ioh-lsp.reject': async (arg) => {
      const id = await pickRun(ctl, 'reject', arg);
      if (!id) return;
      const reason = await vscode.window.showInputBox({ title: `Reject ${id}`, prompt: 'Reason (optional, recorded in the trace)' });
      if (reason === undefined) return;
      await ctl.execute('ioh.reject', rejectArgs(id, reason));
    },
    'ioh-lsp.cancel': async (arg) => {
      const id = await pickRun(ctl, 'cancel', arg);
      if (id) await ctl.execute('ioh.cancel', runIdArgs(id));
    },
    'ioh-lsp.resume': async (arg) => {
      const id = await pickRun(ctl, 'resume', arg);
      if (!id) return;
      const res = await ctl.execute('ioh.resume', runIdArgs(id));
      started(res && typeof res === 'object' && 'runId' in res ? res : { runId: id });
    },
    'ioh-lsp.trace': async (arg) => {
      const id = await pickRun(ctl, 'trace', arg);
      if (id) await traceDoc(id);
    },
    'ioh-lsp.runs': async () => {
      const id = await pickRun(ctl, 'trace', undefined);
      if (id) await traceDoc(id);
    },
    'ioh-lsp.clearTrace': async (arg) => {
      const all = typeof arg !== 'string'
        ? await vscode.window.showQuickPick(['All runs', 'One run…'], { title: 'ioh: clear trace diagnostics' })
        : 'One run…';
      if (!all) return;
      const id = all === 'One run…' ? await pickRun(ctl, 'clearTrace', arg) : undefined;
      if (all === 'One run…' && !id) return;
      await ctl.execute('ioh.clearTrace', clearTraceArgs(id));
    },
    'ioh-lsp.setApiKey': async () => {
      const model = readModel(getter());
      const names = new Set([...(model?.api_key_env ? [model.api_key_env] : []), ...Object.values(DEFAULT_KEY_ENV), ...ctl.keyNames()]);
      const picked = await vscode.window.showQuickPick([...names, 'Other…'], { title: 'Which API key variable?' });
      if (!picked) return;
      const env = picked === 'Other…'
        ? await vscode.window.showInputBox({ prompt: 'Variable name (must end in _API_KEY or _TOKEN)', validateInput: (v) => (isKeyEnvName(v) ? undefined : 'must end in _API_KEY or _TOKEN') })
        : picked;
      if (!env) return;
      const value = await vscode.window.showInputBox({ title: `Set ${env}`, prompt: 'Stored in VS Code SecretStorage, passed to ioh-lsp in its environment only', password: true, ignoreFocusOut: true });
      if (!value) return;
      await ctl.setKey(env, value.trim());
      await ctl.restart();
      void vscode.window.showInformationMessage(`ioh: ${env} stored; server restarted`);
    },
    'ioh-lsp.clearApiKey': async () => {
      const picked = await vscode.window.showQuickPick(ctl.keyNames(), { title: 'Forget which API key?' });
      if (!picked) return;
      await ctl.deleteKey(picked);
      await ctl.restart();
    },
    'ioh-lsp.restart': async () => ctl.restart(),
    'ioh-lsp.showOutput': async () => ctl.output.show(),
  };
  for (const [id, fn] of Object.entries(cmds)) {
    context.subscriptions.push(vscode.commands.registerCommand(id, guard(fn)));
  }
}
