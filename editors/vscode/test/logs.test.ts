import { test } from 'node:test';
import * as assert from 'node:assert/strict';
import { LOG_LEVEL, logServerLine, parseServerLine, TextSink, TraceChannel, traceSetting } from '../src/logs';

test('server stderr lines keep their level', () => {
  const cases: [string, string, string, boolean?][] = [
    // slog's text handler, as `ioh-lsp serve` logs.
    ['time=2026-11-30T16:28:55.895Z level=INFO msg=initialize client="Visual Studio Code"', 'info', 'msg=initialize client="Visual Studio Code"'],
    ['time=2026-11-30T16:28:55.895Z level=DEBUG msg=step run=r-1', 'debug', 'msg=step run=r-1'],
    ['time=2026-11-30T16:28:55.895Z level=WARN msg="register file watching" err=x', 'warn', 'msg="register file watching" err=x'],
    ['time=2026-11-30T16:28:55.895Z level=ERROR msg=serve err="connection: unexpected EOF"', 'error', 'msg=serve err="connection: unexpected EOF"'],
    ['level=WARN+2 msg=odd', 'warn', 'msg=odd'],
    // The level first, as serve writes it now.
    ['level=WARN time=2026-11-30T16:28:55.895Z msg="sandbox downgrade" tier=landlock', 'warn', 'msg="sandbox downgrade" tier=landlock'],
    ['level=DEBUG-4 msg=fine', 'debug', 'msg=fine'],
    // The CLI's form.
    ['ioh-lsp: warning: ignored setting x', 'warn', 'ignored setting x'],
    ['ioh-lsp: error: bad flag', 'error', 'bad flag'],
    // No level: a crash is an error, shown whole.
    ['panic: runtime error: index out of range [3] with length 3', 'error', 'panic: runtime error: index out of range [3] with length 3', false],
    ['level=NOTICE msg=unknown', 'error', 'level=NOTICE msg=unknown', false],
  ];
  for (const [line, level, text, leveled] of cases) assert.deepEqual(parseServerLine(line), { level, text, leveled: leveled ?? true }, line);

  const got: string[] = [];
  const sink = { trace: (m: string) => got.push(`trace ${m}`), debug: (m: string) => got.push(`debug ${m}`), info: (m: string) => got.push(`info ${m}`), warn: (m: string) => got.push(`warn ${m}`), error: (m: string) => got.push(`error ${m}`) };
  for (const l of ['time=t level=INFO msg=a', '', '   ', 'time=t level=WARN msg=b\r']) logServerLine(sink, l);
  assert.deepEqual(got, ['info msg=a', 'warn msg=b']);
  // Once the server mirrors its log as window/logMessage, a leveled stderr
  // line goes at trace level (no duplicate at info); a panic stays an error.
  got.length = 0;
  for (const l of ['level=INFO time=t msg=a', 'goroutine 1 [running]:']) logServerLine(sink, l, true);
  assert.deepEqual(got, ['trace stderr: msg=a', 'error goroutine 1 [running]:']);
});

class Sink implements TextSink {
  name = 'ioh-lsp trace';
  lines: string[] = [];
  disposed = false;
  append(v: string): void { this.lines.push(v); }
  appendLine(v: string): void { this.lines.push(v); }
  replace(v: string): void { this.lines = [v]; }
  clear(): void { this.lines = []; }
  show(): void {}
  hide(): void {}
  dispose(): void { this.disposed = true; }
}

test('ioh.trace.server sets the trace channel level the language client checks', () => {
  assert.deepEqual(['off', 'messages', 'verbose', 'loud', undefined].map(traceSetting), ['off', 'messages', 'verbose', 'off', 'off']);
  const sink = new Sink();
  const now = () => new Date('2026-11-30T16:00:00Z');
  const ch = new TraceChannel(sink, 'off', now);
  // vscode-languageclient sends $/setTrace and traces only when logLevel is Trace.
  assert.equal(ch.logLevel, LOG_LEVEL.Off);
  ch.trace('Sending request initialize');
  assert.deepEqual(sink.lines, [], 'off: nothing logged');

  const seen: number[] = [];
  const sub = ch.onDidChangeLogLevel((l) => seen.push(l));
  ch.setSetting('verbose');
  assert.equal(ch.logLevel, LOG_LEVEL.Trace);
  ch.setSetting('messages'); // still Trace: no event
  ch.trace("Sending request 'workspace/executeCommand - (3)'.", { command: 'ioh.runs' });
  assert.deepEqual(sink.lines, [`2026-11-30T16:00:00.000Z [trace] Sending request 'workspace/executeCommand - (3)'. {"command":"ioh.runs"}`]);
  ch.setSetting('off');
  assert.deepEqual(seen, [LOG_LEVEL.Trace, LOG_LEVEL.Off], 'the client hears each change once');
  sub.dispose();
  ch.setSetting('verbose');
  assert.equal(seen.length, 2, 'a disposed listener hears nothing');
  assert.equal(ch.name, 'ioh-lsp trace');
  ch.dispose();
  assert.ok(sink.disposed);
});
