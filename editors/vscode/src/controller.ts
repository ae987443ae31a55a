// Controller: owns the language client, the API keys in SecretStorage and
// the status bar item. One per extension activation.

import * as vscode from 'vscode';
import {
  DidChangeConfigurationNotification,
  ExecuteCommandRequest,
  LanguageClient,
  LanguageClientOptions,
  ServerOptions,
  State,
  StaticFeature,
  TransportKind,
} from 'vscode-languageclient/node';
import { ClientCaps, ensureReviewCapabilities } from './capabilities';
import { needsGoal, parseRuns, RunSummary, ServerCommand, withGoal } from './commands';
import { resolveServer, ServerMissingError, INSTALL_DOCS } from './server';
import { clientSettings, initializationOptions, isKeyEnvName, serverConfig, serverEnv, SettingGetter } from './settings';
import { anyRunning, statusView } from './status';

const KEY_NAMES = 'ioh-lsp.keyNames';
const secretKey = (env: string): string => `ioh-lsp.key.${env}`;

/** getter reads `ioh.*` settings, scoped to a resource when given. */
export function getter(scope?: vscode.Uri): SettingGetter {
  const cfg = vscode.workspace.getConfiguration('ioh', scope);
  return (key) => cfg.get(key);
}

/** ReviewFeature adds the capabilities that route proposals to the refactor preview. */
class ReviewFeature implements StaticFeature {
  fillClientCapabilities(caps: object): void {
    ensureReviewCapabilities(caps as ClientCaps);
  }
  initialize(): void {}
  getState(): { kind: 'static' } {
    return { kind: 'static' };
  }
  clear(): void {}
}

export class Controller implements vscode.Disposable {
  private client: LanguageClient | undefined;
  private readonly status: vscode.StatusBarItem;
  readonly output: vscode.LogOutputChannel;
  private runs: RunSummary[] = [];
  private poll: NodeJS.Timeout | undefined;
  private disposed = false;

  constructor(private readonly context: vscode.ExtensionContext) {
    this.output = vscode.window.createOutputChannel('ioh-lsp', { log: true });
    this.status = vscode.window.createStatusBarItem('ioh-lsp.status', vscode.StatusBarAlignment.Left, 10);
    this.status.name = 'ioh-lsp runs';
    this.render('stopped');
    this.status.show();
  }

  /** start spawns the server; a missing binary is a message with the install docs, not a throw. */
  async start(): Promise<void> {
    let settings;
    let command: string;
    let initOptions;
    try {
      settings = clientSettings(getter());
      initOptions = initializationOptions(getter());
      command = resolveServer(settings.serverPath, process.env);
    } catch (err) {
      this.render('stopped');
      const msg = err instanceof Error ? err.message : String(err);
      const choice = await vscode.window.showErrorMessage(msg, ...(err instanceof ServerMissingError ? ['Open install docs', 'Open settings'] : ['Open settings']));
      if (choice === 'Open install docs') void vscode.env.openExternal(vscode.Uri.parse(INSTALL_DOCS));
      if (choice === 'Open settings') void vscode.commands.executeCommand('workbench.action.openSettings', 'ioh.');
      return;
    }
    const env = serverEnv(process.env, await this.storedKeys());
    const serverOptions: ServerOptions = {
      command,
      args: settings.serverArgs,
      transport: TransportKind.stdio,
      options: { env },
    };
    const clientOptions: LanguageClientOptions = {
      documentSelector: [{ scheme: 'file' }, { scheme: 'untitled' }],
      initializationOptions: initOptions,
      outputChannel: this.output,
      middleware: {
        workspace: {
          configuration: async (params, token, next) => {
            const res = await next(params, token);
            if (!Array.isArray(res)) return res;
            return params.items.map((item, i) => {
              if (item.section !== 'ioh') return res[i];
              try {
                return serverConfig(getter(item.scopeUri ? vscode.Uri.parse(item.scopeUri) : undefined));
              } catch (err) {
                void vscode.window.showErrorMessage(String(err instanceof Error ? err.message : err));
                return null;
              }
            });
          },
        },
        executeCommand: async (command, args, next) => {
          let a = args;
          if (command === 'ioh.ask' && needsGoal(args)) {
            const goal = await vscode.window.showInputBox({ title: 'Ask agent', prompt: 'What should the agent do?', ignoreFocusOut: true });
            if (!goal?.trim()) return undefined;
            a = withGoal(args, goal);
          }
          const res = await next(command, a);
          this.schedule(300);
          return res;
        },
      },
    };
    const client = new LanguageClient('ioh', 'ioh-lsp', serverOptions, clientOptions);
    client.registerFeature(new ReviewFeature());
    client.onDidChangeState((e) => {
      if (e.newState === State.Running) this.schedule(0);
      else this.render(e.newState === State.Starting ? 'starting' : 'stopped');
    });
    this.client = client;
    this.render('starting');
    try {
      await client.start();
    } catch (err) {
      this.render('stopped');
      void vscode.window.showErrorMessage(`ioh-lsp failed to start: ${err instanceof Error ? err.message : String(err)}`);
    }
  }

  async stop(): Promise<void> {
    this.clearPoll();
    const c = this.client;
    this.client = undefined;
    if (c) await c.stop().catch(() => undefined);
    this.render('stopped');
  }

  async restart(): Promise<void> {
    await this.stop();
    if (!this.disposed) await this.start();
  }

  /**
   * configChanged tells the server that `ioh` changed: an empty
   * didChangeConfiguration makes it pull the section again through
   * workspace/configuration (answered by the middleware above).
   */
  async configChanged(): Promise<void> {
    try {
      serverConfig(getter());
    } catch (err) {
      void vscode.window.showErrorMessage(err instanceof Error ? err.message : String(err));
      return;
    }
    const c = this.client;
    if (c && c.state === State.Running) {
      await c.sendNotification(DidChangeConfigurationNotification.type, { settings: null });
    }
  }

  /** execute runs one of the server's ioh.* commands with one object argument. */
  async execute(command: ServerCommand, arg?: object): Promise<unknown> {
    const c = this.client;
    if (!c || c.state !== State.Running) throw new Error('ioh-lsp is not running');
    const res = await c.sendRequest(ExecuteCommandRequest.type, { command, arguments: arg === undefined ? [] : [arg] });
    this.schedule(300);
    return res;
  }

  async listRuns(): Promise<RunSummary[]> {
    this.runs = parseRuns(await this.execute('ioh.runs'));
    this.render('running');
    return this.runs;
  }

  /** storedKeys reads every API key the user put in SecretStorage. */
  async storedKeys(): Promise<Map<string, string>> {
    const out = new Map<string, string>();
    for (const name of this.context.globalState.get<string[]>(KEY_NAMES, [])) {
      const v = await this.context.secrets.get(secretKey(name));
      if (v) out.set(name, v);
    }
    return out;
  }

  keyNames(): string[] {
    return this.context.globalState.get<string[]>(KEY_NAMES, []);
  }

  async setKey(env: string, value: string): Promise<void> {
    if (!isKeyEnvName(env)) throw new Error(`${env}: an API key variable must end in _API_KEY or _TOKEN`);
    await this.context.secrets.store(secretKey(env), value);
    const names = new Set(this.keyNames());
    names.add(env);
    await this.context.globalState.update(KEY_NAMES, [...names].sort());
  }

  async deleteKey(env: string): Promise<void> {
    await this.context.secrets.delete(secretKey(env));
    await this.context.globalState.update(KEY_NAMES, this.keyNames().filter((n) => n !== env));
  }

  /** schedule polls ioh.runs after ms; fast while a run is running. */
  private schedule(ms: number): void {
    if (this.disposed) return;
    this.clearPoll();
    this.poll = setTimeout(() => void this.refresh(), ms);
  }

  private clearPoll(): void {
    if (this.poll) clearTimeout(this.poll);
    this.poll = undefined;
  }

  private async refresh(): Promise<void> {
    const c = this.client;
    if (!c || c.state !== State.Running) return;
    try {
      const res = await c.sendRequest(ExecuteCommandRequest.type, { command: 'ioh.runs', arguments: [] });
      this.runs = parseRuns(res);
      this.render('running');
    } catch (err) {
      this.output.appendLine(`ioh.runs: ${err instanceof Error ? err.message : String(err)}`);
    }
    this.schedule(anyRunning(this.runs) ? 2000 : 15000);
  }

  private render(state: 'starting' | 'running' | 'stopped'): void {
    const v = statusView(this.runs, state);
    this.status.text = v.text;
    this.status.tooltip = v.tooltip;
    this.status.command = v.traceRunId
      ? { title: 'Show trace', command: 'ioh-lsp.trace', arguments: [v.traceRunId] }
      : { title: 'Show runs', command: 'ioh-lsp.runs' };
  }

  dispose(): void {
    this.disposed = true;
    this.clearPoll();
    void this.client?.stop().catch(() => undefined);
    this.status.dispose();
    this.output.dispose();
  }
}
