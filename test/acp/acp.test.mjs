// End-to-end tests of `ioh-lsp acp` with the official ACP TypeScript SDK
// as the client, on replay runs (no network, no model).
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import { pathToFileURL } from "node:url";
import { AFTER, BEFORE, choose, connect, initialize, isChange, read, settle, start, withDeadline, world } from "./harness.mjs";

const STEP = 90_000;
const kinds = (updates, k) => updates.filter((u) => u.update.sessionUpdate === k).map((u) => u.update);
// Every session/update the agent wrote passed the SDK's schema check
// (the SDK drops a notification its zod schema rejects).
const allValid = (agent, updates) => {
  const sent = agent.lines.filter((l) => JSON.parse(l).method === "session/update").length;
  assert.equal(updates.length, sent, "updates the SDK accepted vs. updates the agent sent");
};
const taskPrompt = (w) => [{ type: "resource_link", uri: pathToFileURL(w.task).href, name: "fix.ioh.yaml" }];

test("initialize advertises ACP v1, loadSession, prompt capabilities, list and resume", async (t) => {
  const w = world(t);
  const agent = start(t, w);
  const res = await connect(agent, () => { throw new Error("no permission expected"); }, (cx) => withDeadline(STEP, "initialize", agent, initialize(cx)));
  assert.equal(res.protocolVersion, 1);
  assert.equal(res.agentCapabilities.loadSession, true);
  assert.equal(typeof res.agentCapabilities.promptCapabilities.embeddedContext, "boolean");
  assert.ok(res.agentCapabilities.sessionCapabilities.list, "session/list advertised");
  assert.ok(res.agentCapabilities.sessionCapabilities.resume, "session/resume advertised");
  assert.equal(res.agentInfo.name, "ioh-lsp");
});

test("allowed: the act and the change are asked, the disk is unchanged before the change is allowed and changed after", async (t) => {
  const w = world(t);
  const agent = start(t, w);
  const asked = [];
  const { stop, updates } = await connect(agent, (params) => {
    asked.push(params);
    if (isChange(params)) {
      // The change arrives verified, with the whole file as its diff,
      // and nothing is written yet.
      assert.equal(read(w.file), BEFORE, "disk untouched while the change awaits permission");
      const diff = params.toolCall.content.find((c) => c.type === "diff");
      assert.equal(diff.path, w.file);
      assert.equal(diff.oldText, BEFORE);
      assert.equal(diff.newText, AFTER);
      return choose(params, "allow_once");
    }
    return choose(params, "allow_once");
  }, async (cx, updates) => {
    await initialize(cx);
    const { sessionId } = await cx.request("session/new", { cwd: w.ws, mcpServers: [] });
    const res = await withDeadline(STEP, "session/prompt", agent, cx.request("session/prompt", { sessionId, prompt: taskPrompt(w) }));
    await settle(cx);
    return { stop: res.stopReason, updates };
  });
  if (process.env.ACP_TRANSCRIPT) fs.writeFileSync(process.env.ACP_TRANSCRIPT, updates.map((u) => JSON.stringify(u)).join("\n") + "\n");
  assert.equal(stop, "end_turn");
  assert.equal(read(w.file), AFTER, "the allowed change is written");
  allValid(agent, updates);

  assert.equal(asked.length, 2, "one act (the command) and one change");
  assert.match(asked[0].toolCall.title, /run wants to exec wc -l stats\.go/);
  assert.deepEqual(asked[0].options.map((o) => o.kind), ["allow_once", "allow_always", "reject_once", "reject_always"]);

  const plan = kinds(updates, "plan");
  assert.ok(plan.length >= 2, "a plan, then its progress");
  assert.match(plan[0].entries[1].content, /divisor/);
  assert.ok(plan.at(-1).entries.every((e) => e.status === "completed"), "every plan entry completed after the change applied");

  const calls = kinds(updates, "tool_call");
  const byKind = (k) => calls.filter((c) => c.kind === k);
  assert.ok(byKind("read").some((c) => c.title === "Read stats.go" && c.locations[0].path === w.file));
  const check = byKind("execute").find((c) => /^Check divisor passed/.test(c.title));
  assert.ok(check, "verification shows as an execute-kind call: " + JSON.stringify(calls.map((c) => c.title)));
  assert.equal(check.status, "completed");
  const checkOut = kinds(updates, "tool_call_update").find((u) => u.toolCallId === check.toolCallId && u.content);
  assert.ok(checkOut, "the check's output follows as an update");

  const ups = kinds(updates, "tool_call_update");
  const edit = [...calls, ...ups].find((c) => c.kind === "edit" && c.title === "Edit stats.go");
  assert.deepEqual(edit.content[0], { type: "diff", path: w.file, oldText: "float64(len(xs)-1)", newText: "float64(len(xs))" });
  const change = ups.filter((u) => u.toolCallId.endsWith("/change")).at(-1);
  assert.equal(change.status, "completed", "the change's call completes once written");

  const usage = kinds(updates, "usage_update");
  assert.ok(usage.length >= 3, "usage after each model turn");
  assert.equal(usage.at(-1).used, 1200 + 40 + 1300 + 30 + 1500 + 60 + 1600 + 20);
  assert.equal(usage.at(-1).size, 100000, "against the token budget");
  assert.ok(kinds(updates, "agent_message_chunk").some((c) => /ended: applied/.test(c.content.text)));
});

test("rejected: reject always denies the act for the rest of the run, a rejected change leaves the disk untouched", async (t) => {
  const w = world(t, { exec: 2 });
  const agent = start(t, w);
  const asked = [];
  const { stop, updates } = await connect(agent, (params) => {
    asked.push(params);
    return choose(params, isChange(params) ? "reject_once" : "reject_always");
  }, async (cx, updates) => {
    await initialize(cx);
    const { sessionId } = await cx.request("session/new", { cwd: w.ws, mcpServers: [] });
    const res = await withDeadline(STEP, "session/prompt", agent, cx.request("session/prompt", { sessionId, prompt: taskPrompt(w) }));
    await settle(cx);
    return { stop: res.stopReason, updates };
  });
  assert.equal(stop, "end_turn");
  assert.equal(read(w.file), BEFORE, "a rejected change writes nothing");
  // The same command twice: asked once, then refused without asking.
  assert.equal(asked.length, 2, asked.map((p) => p.toolCall.title).join("; "));
  assert.ok(!isChange(asked[0]) && isChange(asked[1]), "the change was still offered after the act was rejected");
  const refused = kinds(updates, "tool_call").filter((c) => c.status === "failed" && /wc -l stats\.go/.test(c.title));
  assert.equal(refused.length, 1, "the second attempt shows as refused");
  const change = kinds(updates, "tool_call_update").filter((u) => u.toolCallId.endsWith("/change")).at(-1);
  assert.equal(change.status, "failed");
  assert.ok(kinds(updates, "agent_message_chunk").some((c) => /ended: rejected/.test(c.content.text)));
});

test("cancel: session/cancel while a permission is pending stops the run as cancelled and writes nothing", async (t) => {
  const w = world(t);
  const agent = start(t, w);
  let sid;
  let cancelled;
  const stop = await connect(agent, async (params) => {
    await cancelled(); // session/cancel, then answer as ACP says: cancelled
    return { outcome: { outcome: "cancelled" } };
  }, async (cx) => {
    cancelled = () => cx.notify("session/cancel", { sessionId: sid });
    await initialize(cx);
    sid = (await cx.request("session/new", { cwd: w.ws, mcpServers: [] })).sessionId;
    return (await withDeadline(STEP, "session/prompt", agent, cx.request("session/prompt", { sessionId: sid, prompt: taskPrompt(w) }))).stopReason;
  });
  assert.equal(stop, "cancelled");
  assert.equal(read(w.file), BEFORE);
});

test("load: a finished session is listed and replayed from the trace by a new agent process", async (t) => {
  const w = world(t);
  const first = start(t, w);
  const sid = await connect(first, (params) => choose(params, "allow_once"), async (cx) => {
    await initialize(cx);
    const { sessionId } = await cx.request("session/new", { cwd: w.ws, mcpServers: [] });
    await withDeadline(STEP, "session/prompt", first, cx.request("session/prompt", { sessionId, prompt: taskPrompt(w) }));
    return sessionId;
  });
  first.child.stdin.end();
  assert.equal(await first.exited, 0);

  const second = start(t, w);
  const { listed, updates, prompt } = await connect(second, (params) => choose(params, "allow_once"), async (cx, updates) => {
    await initialize(cx);
    const listed = await cx.request("session/list", { cwd: w.ws });
    // session/resume reopens the session without replaying it.
    await withDeadline(STEP, "session/resume", second, cx.request("session/resume", { sessionId: sid, cwd: w.ws, mcpServers: [] }));
    assert.deepEqual(updates.map((u) => u.update.sessionUpdate).filter((k) => k !== "available_commands_update"), [], "resume sends no history");
    await assert.rejects(cx.request("session/load", { sessionId: "s-0000000000000000", cwd: w.ws, mcpServers: [] }), /no such session/);
    await withDeadline(STEP, "session/load", second, cx.request("session/load", { sessionId: sid, cwd: w.ws, mcpServers: [] }));
    // The loaded session takes new prompts: this one has nothing to fix.
    const prompt = await withDeadline(STEP, "session/prompt", second, cx.request("session/prompt", { sessionId: sid, prompt: [{ type: "text", text: "Say hello" }] }));
    return { listed, updates: [...updates], prompt };
  });
  assert.deepEqual(listed.sessions.map((s) => s.sessionId), [sid]);
  assert.equal(listed.sessions[0].title, "Fix Mean: it divides by len(xs)-1");
  const user = kinds(updates, "user_message_chunk");
  assert.equal(user[0].content.text, "Fix Mean: it divides by len(xs)-1");
  const calls = kinds(updates, "tool_call");
  assert.ok(calls.some((c) => c.kind === "edit" && c.title === "Edit stats.go"), "the edit is replayed");
  assert.ok(calls.some((c) => c.kind === "execute" && /Check divisor passed/.test(c.title)), "the check is replayed");
  assert.ok(kinds(updates, "agent_message_chunk").some((c) => /ended: applied/.test(c.content.text)), "the outcome is replayed");
  assert.ok(updates.every((u) => u.sessionId === sid));
  allValid(second, updates);
  assert.ok(["end_turn", "refusal"].includes(prompt.stopReason), prompt.stopReason);
});

test("malformed messages are answered with -32700 and -32600 and the session continues", async (t) => {
  const w = world(t);
  const agent = start(t, w);
  agent.raw.add("77");
  const listed = await connect(agent, () => { throw new Error("no permission expected"); }, async (cx) => {
    await initialize(cx);
    await agent.writeRaw("{this is not json\n");
    await agent.writeRaw('{"jsonrpc":"2.0","id":77}\n');
    await agent.writeRaw('[{"jsonrpc":"2.0","id":78,"method":"session/list"}]\n');
    const { sessionId } = await cx.request("session/new", { cwd: w.ws, mcpServers: [] });
    return { sessionId, list: await cx.request("session/list", {}) };
  });
  const replies = agent.lines.map((l) => { try { return JSON.parse(l); } catch { return null; } }).filter((m) => m && m.error);
  const codes = replies.map((m) => [m.id, m.error.code]);
  assert.deepEqual(codes, [[null, -32700], [77, -32600], [null, -32600]], agent.lines.join("\n"));
  assert.deepEqual(listed.list.sessions.map((s) => s.sessionId), [listed.sessionId], "the connection went on after the bad lines");
});

test("stop reasons: a token budget that runs out is max_tokens, a run of denied acts is a refusal", async (t) => {
  const w = world(t, {
    cassette: { version: 1, turns: [
      { tool_calls: [{ name: "write_file", arguments: { path: ".git/config", content: "[core]\n" } }], usage: { input_tokens: 100, output_tokens: 10 } },
      { tool_calls: [{ name: "finish", arguments: { summary: "could not" } }], usage: { input_tokens: 100, output_tokens: 10 } },
    ] },
  });
  fs.writeFileSync(w.task.replace("fix.ioh.yaml", "tiny.ioh.yaml"), "version: 1\ngoal: \"Anything\"\nbudget: { tokens: 50 }\n");
  const agent = start(t, w);
  const raises = [];
  // The budget stop offers a larger budget in the panel; this test stops.
  const { budget, denied, updates } = await connect(agent, (params) => {
    assert.match(params.toolCall.toolCallId, /\/budget-/, "only the budget stop asks");
    raises.push(params);
    return choose(params, "reject_once");
  }, async (cx, updates) => {
    await initialize(cx);
    const { sessionId } = await cx.request("session/new", { cwd: w.ws, mcpServers: [] });
    const tiny = [{ type: "resource_link", uri: pathToFileURL(w.task.replace("fix.ioh.yaml", "tiny.ioh.yaml")).href, name: "tiny.ioh.yaml" }];
    const budget = await withDeadline(STEP, "budget prompt", agent, cx.request("session/prompt", { sessionId, prompt: tiny }));
    // A new session starts fresh (a prompt in the same one follows up).
    const fresh = (await cx.request("session/new", { cwd: w.ws, mcpServers: [] })).sessionId;
    const denied = await withDeadline(STEP, "denied prompt", agent, cx.request("session/prompt", { sessionId: fresh, prompt: [{ type: "text", text: "Set the git config" }] }));
    await settle(cx);
    return { budget: budget.stopReason, denied: denied.stopReason, updates };
  });
  assert.equal(budget, "max_tokens");
  assert.deepEqual(raises.map((p) => p.options.map((o) => o.name)), [["Continue with +50%: 75 tokens", "Continue with ×2: 100 tokens", "Stop here"]]);
  assert.match(kinds(updates, "agent_message_chunk").map((c) => c.content.text).join(""), /`ioh-lsp resume r-[0-9a-f]+ --budget-tokens N`/);
  assert.equal(denied, "refusal");
  const refused = kinds(updates, "tool_call").find((c) => c.status === "failed" && /denied by policy: write \.git\/config/.test(c.title));
  assert.ok(refused, "the denied write shows as a failed call");
  assert.ok(!fs.existsSync(w.ws + "/.git/config"));
  allValid(agent, updates);
});

test("crash: an agent killed mid-run leaves a session that loads as interrupted, with the resume command", async (t) => {
  const w = world(t);
  const first = start(t, w);
  let sid;
  let asked;
  const waiting = new Promise((resolve) => { asked = resolve; });
  // The run stops at the act's permission; the agent is killed there.
  const driving = connect(first, () => { asked(); return new Promise(() => {}); }, async (cx) => {
    await initialize(cx);
    sid = (await cx.request("session/new", { cwd: w.ws, mcpServers: [] })).sessionId;
    return cx.request("session/prompt", { sessionId: sid, prompt: taskPrompt(w) }).catch((e) => e);
  }).catch((e) => e); // the connection ends with the kill
  await withDeadline(STEP, "permission request", first, waiting);
  first.child.kill("SIGKILL");
  await first.exited;
  await driving;

  const second = start(t, w);
  const updates = await connect(second, () => { throw new Error("no permission expected"); }, async (cx, updates) => {
    await initialize(cx);
    await withDeadline(STEP, "session/load", second, cx.request("session/load", { sessionId: sid, cwd: w.ws, mcpServers: [] }));
    return [...updates];
  });
  const msgs = kinds(updates, "agent_message_chunk").map((c) => c.content.text);
  assert.ok(msgs.some((m) => /was interrupted before it ended; `ioh-lsp resume r-[0-9a-f]+`/.test(m)), msgs.join("|"));
  assert.ok(kinds(updates, "tool_call").some((c) => c.title === "Read stats.go"), "the steps before the kill are replayed");
  assert.equal(read(w.file), BEFORE);
});
