// Logs: the server's stderr lines at their own level in the "ioh-lsp" log
// channel, and the LSP traffic that `ioh.trace.server` asks for in a trace
// channel of its own. No 'vscode' import: the extension passes its
// channels in, and node's test runner checks these directly.

export type Level = 'trace' | 'debug' | 'info' | 'warn' | 'error';

export interface ServerLine {
  level: Level;
  text: string;
  /** leveled: the line carried its level (a slog record, which the server also sends as window/logMessage once live). */
  leveled: boolean;
}

const SLOG_LEVEL: Record<string, Level> = { DEBUG: 'debug', INFO: 'info', WARN: 'warn', ERROR: 'error' };
const CLI_LEVEL: Record<string, Level> = { debug: 'debug', info: 'info', warning: 'warn', warn: 'warn', error: 'error' };

/**
 * parseServerLine reads one stderr line of `ioh-lsp serve`. The server logs
 * with slog's text handler (`level=WARN time=… msg=… key=value`, or with
 * the time first); the channel adds its own time, so `time=` and `level=`
 * are dropped and the
 * level chooses the channel's method (`WARN+2` is still warn, `DEBUG-4`
 * debug). The CLI's `ioh-lsp: warning: …` form is read too. A line with no
 * level (a Go panic, a crash) is an error.
 */
export function parseServerLine(line: string): ServerLine {
  const s = line.replace(/\r$/, '');
  const m = /^(?:time=\S+\s+)?level=([A-Z]+)([+-]\d+)?(?:\s+time=\S+)?\s*(.*)$/.exec(s);
  if (m) {
    const base = SLOG_LEVEL[m[1]];
    if (base) return { level: base, text: m[3], leveled: true };
  }
  const c = /^ioh-lsp: (debug|info|warning|warn|error): (.*)$/.exec(s);
  if (c) return { level: CLI_LEVEL[c[1]], text: c[2], leveled: true };
  return { level: 'error', text: s, leveled: false };
}

/** LogSink is the part of a vscode.LogOutputChannel the log mapping uses. */
export interface LogSink {
  trace(message: string): void;
  debug(message: string): void;
  info(message: string): void;
  warn(message: string): void;
  error(message: string): void;
}

/**
 * logServerLine writes a stderr line to the channel at its level; blank
 * lines are dropped. Once the server is live (mirrored) it sends each log
 * record as window/logMessage too, which the client shows at that level:
 * the stderr copy of a leveled line then goes at trace level, so a record
 * shows once (and its stderr form, with the time, at the Trace level).
 * A line without a level (a panic) always shows as an error.
 */
export function logServerLine(sink: LogSink, line: string, mirrored = false): void {
  if (line.trim() === '') return;
  const { level, text, leveled } = parseServerLine(line);
  if (mirrored && leveled) sink.trace(`stderr: ${text}`);
  else sink[level](text);
}

/** The `ioh.trace.server` values. */
export type TraceSetting = 'off' | 'messages' | 'verbose';

export function traceSetting(v: unknown): TraceSetting {
  return v === 'messages' || v === 'verbose' ? v : 'off';
}

/** vscode.LogLevel's numbers (Off 0, Trace 1, … Error 5). */
export const LOG_LEVEL = { Off: 0, Trace: 1, Debug: 2, Info: 3, Warning: 4, Error: 5 } as const;

/** TextSink is the part of a plain vscode.OutputChannel the trace channel writes to. */
export interface TextSink {
  readonly name: string;
  append(value: string): void;
  appendLine(value: string): void;
  replace(value: string): void;
  clear(): void;
  show(preserveFocus?: boolean): void;
  hide(): void;
  dispose(): void;
}

type Listener<T> = (e: T) => unknown;
interface Disposable { dispose(): unknown }

/**
 * TraceChannel is the language client's trace output channel. The client
 * sends `$/setTrace` and logs traffic only while its trace channel's log
 * level is Trace, whatever `ioh.trace.server` says; this channel's level
 * follows the setting instead (Trace unless it is off), so "verbose"
 * shows the traffic with its payloads and "off" shows nothing. Messages
 * go to a plain output channel, one line per message, time first.
 */
export class TraceChannel {
  private level: number;
  private readonly listeners = new Set<Listener<number>>();

  constructor(private readonly sink: TextSink, setting: TraceSetting, private readonly now: () => Date = () => new Date()) {
    this.level = setting === 'off' ? LOG_LEVEL.Off : LOG_LEVEL.Trace;
  }

  get name(): string {
    return this.sink.name;
  }

  get logLevel(): number {
    return this.level;
  }

  /** setSetting applies a changed `ioh.trace.server` and tells the client. */
  setSetting(setting: TraceSetting): void {
    const want = setting === 'off' ? LOG_LEVEL.Off : LOG_LEVEL.Trace;
    if (want === this.level) return;
    this.level = want;
    for (const l of [...this.listeners]) l(want);
  }

  readonly onDidChangeLogLevel = (listener: Listener<number>, thisArgs?: unknown, disposables?: Disposable[]): Disposable => {
    const bound: Listener<number> = (e) => listener.call(thisArgs, e);
    this.listeners.add(bound);
    const d = { dispose: () => void this.listeners.delete(bound) };
    disposables?.push(d);
    return d;
  };

  private line(tag: string, message: string, args: unknown[]): void {
    if (this.level === LOG_LEVEL.Off) return;
    const extra = args.length ? ' ' + args.map((a) => (typeof a === 'string' ? a : JSON.stringify(a))).join(' ') : '';
    this.sink.appendLine(`${this.now().toISOString()} [${tag}] ${message}${extra}`);
  }

  trace(message: string, ...args: unknown[]): void { this.line('trace', message, args); }
  debug(message: string, ...args: unknown[]): void { this.line('debug', message, args); }
  info(message: string, ...args: unknown[]): void { this.line('info', message, args); }
  warn(message: string, ...args: unknown[]): void { this.line('warning', message, args); }
  error(message: string | Error, ...args: unknown[]): void { this.line('error', message instanceof Error ? message.message : message, args); }
  append(value: string): void { this.sink.append(value); }
  appendLine(value: string): void { this.sink.appendLine(value); }
  replace(value: string): void { this.sink.replace(value); }
  clear(): void { this.sink.clear(); }
  show(preserveFocus?: boolean): void { this.sink.show(preserveFocus); }
  hide(): void { this.sink.hide(); }
  dispose(): void {
    this.listeners.clear();
    this.sink.dispose();
  }
}
