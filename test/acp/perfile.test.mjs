// Per-file decisions through the official ACP SDK: a change of two files
// offers "Choose files…"; accepting one file writes that file only, the
// trace records partial_apply, and /undo puts back that file alone.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { BIN, connect, initialize, read, settle, start, withDeadline, world } from "./harness.mjs";

const STEP = 90_000;
const turn = (name, args) => ({ tool_calls: [{ name, arguments: args }], usage: { input_tokens: 100, output_tokens: 10 } });
const twoFiles = {
  version: 1,
  turns: [
    turn("edit_file", { path: "a.txt", old: "alpha old", new: "alpha new" }),
    turn("edit_file", { path: "b.txt", old: "beta old", new: "beta new" }),
    turn("finish", { summary: "fixed both" }),
  ],
};

test("a two-file change decided per file writes the accepted file only; /undo reverts it alone", async (t) => {
  const w = world(t, { cassette: twoFiles });
  const a = path.join(w.ws, "a.txt"), b = path.join(w.ws, "b.txt");
  fs.writeFileSync(a, "alpha old\n");
  fs.writeFileSync(b, "beta old\n");
  fs.writeFileSync(w.task, 'version: 1\ngoal: "Fix both"\nverify:\n  checks:\n    - { name: both, run: ["grep", "-q", "new", "a.txt", "b.txt"] }\n');
  const asked = [];
  const agent = start(t, w);
  const out = await connect(agent, async (params) => {
    asked.push({ title: params.toolCall.title, options: params.options });
    const pick = (kind, name) => params.options.find((o) => o.kind === kind && (!name || name.test(o.name)));
    let o;
    if (params.toolCall.toolCallId.endsWith("/change")) o = pick("allow_once", /^Choose files/);
    else if (/^Apply a\.txt\?/.test(params.toolCall.title)) o = pick("allow_once");
    else o = pick("reject_once");
    assert.ok(o, "an option for " + params.toolCall.title + " in " + JSON.stringify(params.options));
    return { outcome: { outcome: "selected", optionId: o.optionId } };
  }, async (cx, updates) => {
    await initialize(cx);
    const { sessionId } = await cx.request("session/new", { cwd: w.ws, mcpServers: [] });
    const run = await withDeadline(STEP, "prompt", agent, cx.request("session/prompt", { sessionId, prompt: [{ type: "resource_link", uri: pathToFileURL(w.task).href, name: "fix.ioh.yaml" }] }));
    await settle(cx);
    const afterRun = { a: read(a), b: read(b) };
    const from = updates.length;
    await withDeadline(STEP, "/undo", agent, cx.request("session/prompt", { sessionId, prompt: [{ type: "text", text: "/undo" }] }));
    await settle(cx);
    const undo = updates.slice(from).filter((u) => u.update.sessionUpdate === "agent_message_chunk").map((u) => u.update.content.text).join("");
    return { run, afterRun, undo };
  });
  assert.equal(out.run.stopReason, "end_turn");
  assert.deepEqual(asked.map((x) => x.title.replace(/ \(file.*$/, "")), ["Write the change to 2 file(s): a.txt, b.txt", "Apply a.txt?", "Apply b.txt?"]);
  for (const o of asked.flatMap((x) => x.options)) assert.ok(["allow_once", "allow_always", "reject_once", "reject_always"].includes(o.kind), o.kind);
  assert.deepEqual(out.afterRun, { a: "alpha new\n", b: "beta old\n" }, "only the accepted file was written");
  assert.match(out.undo, /a\.txt/);
  assert.doesNotMatch(out.undo, /b\.txt/);
  assert.equal(read(a), "alpha old\n", "/undo put a.txt back");
  assert.equal(read(b), "beta old\n");

  const tr = spawnSync(BIN, ["trace", "--last", "--json"], { cwd: w.ws, env: w.env, encoding: "utf8" });
  assert.equal(tr.status, 0, tr.stderr);
  const partial = tr.stdout.split("\n").filter(Boolean).map((l) => JSON.parse(l)).find((e) => e.type === "partial_apply");
  assert.ok(partial, "a partial_apply event in the trace:\n" + tr.stdout);
  assert.deepEqual(partial.files.map((f) => [f.path, f.applied.length, f.dropped.length]), [["a.txt", 1, 0], ["b.txt", 0, 1]]);
});
