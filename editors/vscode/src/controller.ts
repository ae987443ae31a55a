// Controller: owns the language client, the API keys in SecretStorage,
// the log and trace channels and the status bar item. One per extension
// activation. The status bar follows the server's $/progress for its runs
// (one ioh.runs refresh when a run starts or ends, after a command, and on
// start); nothing polls.

import * as readline from 'node:readline';
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
import { CommandArgs, FALLBACK_TASK_RULE, needsGoal, parseRuns, refusalMessage, RunSummary, ServerCommand, TaskFileRule, taskFileRule, withGoal } from './commands';
import { logServerLine, TraceChannel, traceSetting } from './logs';
import { resolveServer, ServerMissingError, INSTALL_DOCS, serverVersion, settingSource } from './server';
import { clientSettings, initializationOptions, isKeyEnvName, serverConfig, serverEnv, SettingGetter, userScoped } from './settings';
import { ProgressValue, RunTracker, statusView } from './status';

const KEY_NAMES = 'ioh-lsp.keyNames';
const secretKey = (env: string): string => `ioh-lsp.key.${env}`;

/**
 * getter reads `ioh.*` settings, scoped to a resource when given; the
 * endpoint, key-variable, policy and trust settings from the User
 * settings only (settings.ts userScoped), whatever the workspace sets.
 */
export function getter(scope?: vscode.Uri): SettingGetter {
  const cfg = vscode.workspace.getConfiguration('ioh', scope);
  return userScoped((key) => cfg.get(key), (key) => cfg.inspect(key));
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
  private readonly traceChannel: TraceChannel;
  private runs: RunSummary[] = [];
  private readonly tracker = new RunTracker();
  private refreshing: Promise<void> | undefined;
  private refreshAgain = false;
  private disposed = false;
  /** The server's task-file rule (initialize result), else the fallback. */
  taskRule: TaskFileRule = FALLBACK_TASK_RULE;

  constructor(private readonly context: vscode.ExtensionContext) {
    this.output = vscode.window.createOutputChannel('ioh-lsp', { log: true });
    this.traceChannel = new TraceChannel(vscode.window.createOutputChannel('ioh-lsp trace'), traceSetting(getter()('trace.server')));
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
      this.output.error(err instanceof Error ? err.message : String(err));
      this.render('stopped');
      const msg = err instanceof Error ? err.message : String(err);
      const choice = await vscode.window.showErrorMessage(msg, ...(err instanceof ServerMissingError ? ['Open install docs', 'Open settings'] : ['Open settings']));
      if (choice === 'Open install docs') void vscode.env.openExternal(vscode.Uri.parse(INSTALL_DOCS));
      if (choice === 'Open settings') void vscode.commands.executeCommand('workbench.action.openSettings', 'ioh.');
      return;
    }
    const env = serverEnv(process.env, await this.storedKeys());
    // Say which binary runs: a remote window (code-server, Remote-SSH,
    // WSL) reads settings from other places than a local one.
    const from = settingSource(vscode.workspace.getConfiguration('ioh').inspect<string>('server.path'));
    if (vscode.env.remoteName && from === 'default') {
      // VS Code reads no machine(-overridable) setting from the local User
      // settings in a remote window (code-server, Remote-SSH, WSL).
      this.output.warn(`ioh.server.path is not set for this ${vscode.env.remoteName} window, so ${command} is used; a value in your local User settings does not apply here: set it in the Remote settings (Preferences: Open Remote Settings) or the workspace settings`);
    }
    this.output.info(`starting ${command} ${settings.serverArgs.join(' ')} (${await serverVersion(command, env)}; ioh.server.path ${JSON.stringify(settings.serverPath)} from ${from})`);
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
      // The client logs traffic only while its trace channel's level is
      // Trace; this one's level follows ioh.trace.server.
      traceOutputChannel: this.traceChannel as unknown as vscode.LogOutputChannel,
      stdioOptions: {
        stdout: (input, ch) => readline.createInterface({ input, crlfDelay: Infinity, terminal: false }).on('line', (l) => ch.info(l)),
        stderr: (input, ch) => readline.createInterface({ input, crlfDelay: Infinity, terminal: false }).on('line', (l) => logServerLine(ch, l, this.client?.state === State.Running)),
      },
      middleware: {
        handleWorkDoneProgress: (token, params, next) => {
          next(token, params);
          const act = this.tracker.onProgress(token, params as ProgressValue);
          if (act === 'refresh') this.refreshSoon();
          else if (act === 'render') this.render('running');
        },
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
        // The server's commands as lenses and code actions run: a refusal
        // (a task that cannot start: the server also marks the task-file
        // line) is an error notification, not a log line nobody sees.
        executeCommand: async (command, args) => {
          let a = args;
          if (command === 'ioh.ask' && needsGoal(args)) {
            const goal = await vscode.window.showInputBox({ title: 'Ask agent', prompt: 'What should the agent do?', ignoreFocusOut: true });
            if (!goal?.trim()) return undefined;
            a = withGoal(args, goal);
          }
          try {
            return await this.client?.sendRequest(ExecuteCommandRequest.type, { command, arguments: a });
          } catch (err) {
            const msg = refusalMessage(command, err);
            this.output.warn(msg);
            void vscode.window.showErrorMessage(msg);
            return undefined;
          } finally {
            this.refreshSoon();
          }
        },
      },
    };
    const client = new LanguageClient('ioh', 'ioh-lsp', serverOptions, clientOptions);
    client.registerFeature(new ReviewFeature());
    client.onDidChangeState((e) => {
      if (e.newState === State.Running) {
        this.taskRule = taskFileRule(client.initializeResult) ?? FALLBACK_TASK_RULE;
        const info = client.initializeResult?.serverInfo;
        this.output.info(`server ${info?.name ?? '?'} ${info?.version ?? ''} running; task files: ${this.taskRule.globs.join(', ')}`);
        this.refreshSoon();
      } else {
        this.tracker.clear();
        this.render(e.newState === State.Starting ? 'starting' : 'stopped');
      }
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
    this.traceChannel.setSetting(traceSetting(getter()('trace.server')));
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
  async execute<C extends ServerCommand>(command: C, arg?: CommandArgs[C]): Promise<unknown> {
    const c = this.client;
    if (!c || c.state !== State.Running) throw new Error('ioh-lsp is not running');
    const res = await c.sendRequest(ExecuteCommandRequest.type, { command, arguments: arg === undefined ? [] : [arg] });
    if (command !== 'ioh.runs' && command !== 'ioh.trace') this.refreshSoon();
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

  /**
   * refreshSoon asks the server for ioh.runs once; calls that come while
   * one is in flight make one more afterwards, never a loop.
   */
  private refreshSoon(): void {
    if (this.disposed) return;
    if (this.refreshing) {
      this.refreshAgain = true;
      return;
    }
    this.refreshing = this.refresh().finally(() => {
      this.refreshing = undefined;
      if (this.refreshAgain) {
        this.refreshAgain = false;
        this.refreshSoon();
      }
    });
  }

  private async refresh(): Promise<void> {
    const c = this.client;
    if (!c || c.state !== State.Running) return;
    try {
      const res = await c.sendRequest(ExecuteCommandRequest.type, { command: 'ioh.runs', arguments: [] });
      this.runs = parseRuns(res);
      this.render('running');
    } catch (err) {
      this.output.warn(`ioh.runs: ${err instanceof Error ? err.message : String(err)}`);
    }
  }

  private render(state: 'starting' | 'running' | 'stopped'): void {
    const v = statusView(this.runs, state, this.tracker.runs());
    this.status.text = v.text;
    this.status.tooltip = v.tooltip;
    this.status.command = { title: 'List runs', command: 'ioh-lsp.runs' };
  }

  dispose(): void {
    this.disposed = true;
    void this.client?.stop().catch(() => undefined);
    this.status.dispose();
    this.output.dispose();
    this.traceChannel.dispose();
  }
}
