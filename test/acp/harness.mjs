// Test harness: a temporary world (HOME, XDG_*, IOH_STATE_DIR), a small
// workspace with a task file and a replay cassette, and `ioh-lsp acp`
// started as a child and driven by the official ACP TypeScript SDK.
import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { Writable } from "node:stream";
import { client, ndJsonStream } from "@agentclientprotocol/sdk";

export const BIN = process.env.IOH_LSP || path.resolve(import.meta.dirname, "../../bin/ioh-lsp");

export const BEFORE = "package stats\n\nfunc Mean(xs []float64) float64 {\n\tsum := 0.0\n\tfor _, x := range xs {\n\t\tsum += x\n\t}\n\treturn sum / float64(len(xs)-1)\n}\n";
export const AFTER = BEFORE.replace("float64(len(xs)-1)", "float64(len(xs))");

// A run that reads the file, asks to run a command (exec is Ask-tier by
// default), edits, and finishes; the task's check runs in the sandbox.
export function cassette({ exec = 1 } = {}) {
  const turns = [
    { text: "Reading the implementation.", tool_calls: [{ name: "read_file", arguments: { path: "stats.go" } }], usage: { input_tokens: 1200, output_tokens: 40 } },
  ];
  for (let i = 0; i < exec; i++) {
    turns.push({ text: "Counting the lines first.", tool_calls: [{ name: "run", arguments: { argv: ["wc", "-l", "stats.go"] } }], usage: { input_tokens: 1300, output_tokens: 30 } });
  }
  turns.push(
    { text: "Mean divides by len(xs)-1; fixing the divisor.", tool_calls: [{ name: "edit_file", arguments: { path: "stats.go", old: "float64(len(xs)-1)", new: "float64(len(xs))" } }], usage: { input_tokens: 1500, output_tokens: 60 } },
    { tool_calls: [{ name: "finish", arguments: { summary: "Mean now divides by len(xs)." } }], usage: { input_tokens: 1600, output_tokens: 20 } },
  );
  return { version: 1, turns };
}

export const TASK = [
  "version: 1",
  'goal: "Fix Mean: it divides by len(xs)-1"',
  "verify:",
  "  checks:",
  '    - { name: divisor, run: ["grep", "-q", "float64(len(xs))$", "stats.go"] }',
  "budget: { steps: 10, tokens: 100000 }",
  "",
].join("\n");

// world makes a fresh temporary world and workspace.
export function world(t, opts = {}) {
  const base = fs.mkdtempSync(path.join(os.tmpdir(), "ioh-acp-"));
  t.after(() => fs.rmSync(base, { recursive: true, force: true }));
  const ws = path.join(base, "ws");
  fs.mkdirSync(ws);
  fs.writeFileSync(path.join(ws, "stats.go"), BEFORE);
  fs.writeFileSync(path.join(ws, "fix.ioh.yaml"), TASK);
  const cas = path.join(base, "cassette.json");
  fs.writeFileSync(cas, JSON.stringify(opts.cassette || cassette(opts)));
  const env = {
    PATH: process.env.PATH,
    HOME: path.join(base, "home"),
    XDG_CONFIG_HOME: path.join(base, "config"),
    XDG_STATE_HOME: path.join(base, "state"),
    IOH_STATE_DIR: path.join(base, "state", "ioh"),
  };
  for (const d of [env.HOME, env.XDG_CONFIG_HOME]) fs.mkdirSync(d, { recursive: true });
  return { base, ws, cassette: cas, env, file: path.join(ws, "stats.go"), task: path.join(ws, "fix.ioh.yaml") };
}

// start runs `ioh-lsp acp` in w and returns the child with a filtered
// line stream for the SDK: every line the agent writes is kept in
// `lines`; replies to raw messages a test writes itself (ids it names in
// `raw`, or null) are kept from the SDK, which did not send them.
export function start(t, w, args = []) {
  const child = spawn(BIN, ["acp", "--cassette", w.cassette, ...args], { env: w.env, stdio: ["pipe", "pipe", "pipe"] });
  let stderr = "";
  child.stderr.on("data", (d) => { stderr += d; });
  const lines = [];
  const raw = new Set();
  const input = new ReadableStream({
    start(controller) {
      let buf = "";
      child.stdout.on("data", (d) => {
        buf += d;
        let i;
        while ((i = buf.indexOf("\n")) >= 0) {
          const line = buf.slice(0, i);
          buf = buf.slice(i + 1);
          if (!line.trim()) continue;
          lines.push(line);
          let msg;
          try { msg = JSON.parse(line); } catch { msg = null; }
          if (msg && !msg.method && (msg.id === null || raw.has(String(msg.id)))) continue;
          try { controller.enqueue(new TextEncoder().encode(line + "\n")); } catch { /* the SDK stopped reading */ }
        }
      });
      child.stdout.on("end", () => { try { controller.close(); } catch { /* the SDK closed it first */ } });
    },
  });
  const output = Writable.toWeb(child.stdin);
  const exited = new Promise((resolve) => child.on("exit", (code) => resolve(code)));
  t.after(async () => {
    // Closing stdin ends the agent; one that lingers is killed.
    child.stdin.end();
    const timer = setTimeout(() => child.kill("SIGKILL"), 10_000);
    await exited;
    clearTimeout(timer);
  });
  return {
    child, lines, raw, exited,
    stream: ndJsonStream(output, input),
    stderr: () => stderr,
    // writeRaw writes bytes to the agent's stdin outside the SDK.
    writeRaw: (s) => new Promise((res, rej) => child.stdin.write(s, (e) => (e ? rej(e) : res()))),
  };
}

// connect drives one agent with the SDK: updates are collected and
// onPermission answers session/request_permission.
export async function connect(agent, onPermission, op) {
  const updates = [];
  const app = client()
    .onNotification("session/update", ({ params }) => { updates.push(params); })
    .onRequest("session/request_permission", async ({ params }) => onPermission(params, updates));
  return app.connectWith(agent.stream, (cx) => op(cx, updates));
}

export async function initialize(cx) {
  return cx.request("initialize", { protocolVersion: 1, clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false }, clientInfo: { name: "acp-test", version: "1" } });
}

// settle waits until every update sent before now has reached the
// test's handler: the SDK runs notification handlers asynchronously, so
// a reply can resolve before the updates sent ahead of it are handled;
// one more round trip to the agent lets them finish.
export async function settle(cx) {
  await cx.request("session/list", {});
}

export function choose(params, kind) {
  const o = params.options.find((x) => x.kind === kind);
  if (!o) throw new Error(`no ${kind} option in ${JSON.stringify(params.options)}`);
  return { outcome: { outcome: "selected", optionId: o.optionId } };
}

export const isChange = (params) => params.toolCall.toolCallId.endsWith("/change");

export function read(file) { return fs.readFileSync(file, "utf8"); }

// withDeadline fails a step that does not finish in ms, saying what it
// waited for and what the agent said last.
export async function withDeadline(ms, what, agent, p) {
  let timer;
  const deadline = new Promise((_, rej) => {
    timer = setTimeout(() => rej(new Error(`${what}: no answer in ${ms} ms; agent stderr:\n${agent.stderr()}\nlast lines:\n${agent.lines.slice(-5).join("\n")}`)), ms);
  });
  try { return await Promise.race([p, deadline]); } finally { clearTimeout(timer); }
}
