// The panel's conventions through the official ACP SDK: modes (the
// approval policy), config options, slash commands that start no run, a
// budget stop continued from the panel, CLI runs in session/list.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { AFTER, BEFORE, BIN, cassette, choose, connect, initialize, isChange, read, settle, start, withDeadline, world } from "./harness.mjs";

const STEP = 90_000;
const kinds = (updates, k) => updates.filter((u) => u.update.sessionUpdate === k).map((u) => u.update);
const messages = (updates) => kinds(updates, "agent_message_chunk").map((c) => c.content.text).join("");
const allValid = (agent, updates) => {
  const sent = agent.lines.filter((l) => JSON.parse(l).method === "session/update").length;
  assert.equal(updates.length, sent, "updates the SDK accepted vs. updates the agent sent");
};
const taskPrompt = (file) => [{ type: "resource_link", uri: pathToFileURL(file).href, name: path.basename(file) }];
const text = (t) => [{ type: "text", text: t }];
const noPermission = (params) => { throw new Error("no permission expected: " + params.toolCall.title); };

test("modes: never asks nothing and writes nothing; /diff and /approve answer in the panel and start no run", async (t) => {
  const w = world(t);
  const agent = start(t, w);
  const out = await connect(agent, noPermission, async (cx, updates) => {
    await initialize(cx);
    const created = await cx.request("session/new", { cwd: w.ws, mcpServers: [] });
    const { sessionId } = created;
    await cx.request("session/set_mode", { sessionId, modeId: "never" });
    const run = await withDeadline(STEP, "prompt in mode never", agent, cx.request("session/prompt", { sessionId, prompt: taskPrompt(w.task) }));
    await settle(cx);
    const afterRun = updates.length;
    const diff = await withDeadline(STEP, "/diff", agent, cx.request("session/prompt", { sessionId, prompt: text("/diff") }));
    await settle(cx);
    const diffUpdates = updates.slice(afterRun);
    const onDiskBeforeApprove = read(w.file);
    const approved = await withDeadline(STEP, "/approve", agent, cx.request("session/prompt", { sessionId, prompt: text("/approve") }));
    await assert.rejects(cx.request("session/set_mode", { sessionId, modeId: "sometimes" }), /unknown mode "sometimes": want ask, auto, never/);
    await settle(cx);
    return { created, run, diff, diffUpdates, approved, onDiskBeforeApprove, updates: [...updates] };
  });
  const { created, updates } = out;
  assert.equal(created.modes.currentModeId, "ask", "a new session asks (no approve in the configuration)");
  assert.deepEqual(created.modes.availableModes.map((m) => m.id), ["ask", "auto", "never"]);
  const opts = Object.fromEntries(created.configOptions.map((o) => [o.id, o]));
  assert.equal(opts.mode.category, "mode");
  assert.equal(opts.mode.currentValue, "ask");
  assert.equal(opts.model.category, "model");
  assert.match(opts.model.options[0].description, /fixed by ioh-lsp acp's --provider, --model or --cassette/);
  assert.deepEqual(kinds(updates, "current_mode_update").map((u) => u.currentModeId), ["never"]);
  assert.equal(kinds(updates, "config_option_update").at(-1).configOptions.find((o) => o.id === "mode").currentValue, "never");

  assert.equal(out.run.stopReason, "end_turn");
  assert.equal(out.onDiskBeforeApprove, BEFORE, "mode never wrote nothing");
  const denied = kinds(updates, "tool_call").find((c) => c.status === "failed" && /wc -l stats\.go/.test(c.title));
  assert.ok(denied, "the Ask-tier act was denied without a request");
  assert.match(denied.content[0].content.text, /Denied by the session's never mode/);
  assert.match(messages(updates), /ended: awaiting_approval/);

  assert.equal(out.diff.stopReason, "end_turn");
  assert.equal(kinds(out.diffUpdates, "plan").length, 0, "/diff started no run: no plan");
  assert.equal(kinds(out.diffUpdates, "usage_update").length, 0, "/diff called no model");
  assert.match(messages(out.diffUpdates), /```diff\n[\s\S]*-\treturn sum \/ float64\(len\(xs\)-1\)\n\+\treturn sum \/ float64\(len\(xs\)\)/);

  assert.equal(out.approved.stopReason, "end_turn");
  assert.equal(read(w.file), AFTER, "/approve wrote the pending change");
  assert.match(messages(updates), /change is written\. \/undo r-[0-9a-f]+ puts back what it replaced/);
  allValid(agent, updates);
});

test("modes: auto writes a verified change without asking; ask (the control) asks for it", async (t) => {
  const w = world(t, { exec: 0 });
  for (const [mode, asks] of [["auto", 0], ["ask", 1]]) {
    fs.writeFileSync(w.file, BEFORE);
    const agent = start(t, w);
    const asked = [];
    const stop = await connect(agent, (params) => { asked.push(params); return choose(params, "allow_once"); }, async (cx) => {
      await initialize(cx);
      const { sessionId } = await cx.request("session/new", { cwd: w.ws, mcpServers: [] });
      const set = await cx.request("session/set_config_option", { sessionId, configId: "mode", value: mode });
      assert.equal(set.configOptions.find((o) => o.id === "mode").currentValue, mode);
      return (await withDeadline(STEP, `prompt in mode ${mode}`, agent, cx.request("session/prompt", { sessionId, prompt: taskPrompt(w.task) }))).stopReason;
    });
    assert.equal(stop, "end_turn", mode);
    assert.equal(read(w.file), AFTER, `mode ${mode} wrote the verified change`);
    assert.equal(asked.filter(isChange).length, asks, `mode ${mode}: change permission requests`);
  }
});

test("commands: available after session/new; /help and an unknown command answer in the panel and start no run", async (t) => {
  const w = world(t);
  const agent = start(t, w);
  const { updates, help, unknown, listed } = await connect(agent, noPermission, async (cx, updates) => {
    await initialize(cx);
    const { sessionId } = await cx.request("session/new", { cwd: w.ws, mcpServers: [] });
    const help = await withDeadline(STEP, "/help", agent, cx.request("session/prompt", { sessionId, prompt: text("/help") }));
    const unknown = await withDeadline(STEP, "/hlep", agent, cx.request("session/prompt", { sessionId, prompt: text("/hlep me") }));
    const listed = await cx.request("session/list", { cwd: w.ws });
    await settle(cx);
    return { updates: [...updates], help, unknown, listed };
  });
  const cmds = kinds(updates, "available_commands_update");
  assert.equal(cmds.length, 1);
  assert.deepEqual(cmds[0].availableCommands.map((c) => c.name), ["help", "runs", "diff", "approve", "reject", "resume", "undo"]);
  assert.equal(help.stopReason, "end_turn");
  assert.equal(unknown.stopReason, "end_turn");
  assert.equal(kinds(updates, "plan").length, 0, "no plan: no run started");
  assert.equal(kinds(updates, "tool_call").length, 0);
  assert.match(messages(updates), /- \/runs: /);
  assert.match(messages(updates), /\/hlep is not a command of this agent: \/help lists them/);
  assert.equal(listed.sessions.length, 1);
  assert.equal(listed.sessions[0].title, undefined, "the session has no run, so no title");
  allValid(agent, updates);
});

test("budget stop: the step budget is raised from the panel and the run goes on in the same turn", async (t) => {
  const w = world(t, { exec: 0 });
  const task = path.join(w.ws, "steps.ioh.yaml");
  fs.writeFileSync(task, fs.readFileSync(w.task, "utf8").replace("budget: { steps: 10, tokens: 100000 }", "budget: { steps: 2, tokens: 100000 }"));
  const agent = start(t, w);
  const asked = [];
  const { stop, updates } = await connect(agent, (params) => {
    asked.push(params);
    if (params.toolCall.toolCallId.includes("/budget-")) {
      const raise = params.options.find((o) => o.name.startsWith("Continue with +50%"));
      assert.ok(raise, JSON.stringify(params.options));
      return { outcome: { outcome: "selected", optionId: raise.optionId } };
    }
    return choose(params, "allow_once");
  }, async (cx, updates) => {
    await initialize(cx);
    const { sessionId } = await cx.request("session/new", { cwd: w.ws, mcpServers: [] });
    const res = await withDeadline(STEP, "prompt", agent, cx.request("session/prompt", { sessionId, prompt: taskPrompt(task) }));
    await settle(cx);
    return { stop: res.stopReason, updates: [...updates] };
  });
  assert.equal(asked.length, 2, asked.map((p) => p.toolCall.title).join("; "));
  assert.match(asked[0].toolCall.title, /stopped: step budget .*\(steps 2\/2.*\)\. Continue with a larger budget\?/);
  assert.deepEqual(asked[0].options.map((o) => o.name), ["Continue with +50%: 3 steps", "Continue with ×2: 4 steps", "Stop here"]);
  assert.ok(isChange(asked[1]), "the resumed run finished and offered its change");
  assert.equal(stop, "end_turn");
  assert.equal(read(w.file), AFTER);
  const said = messages(updates);
  assert.match(said, /ended: budget_exceeded.*`ioh-lsp resume r-[0-9a-f]+ --budget-steps N`/);
  assert.doesNotMatch(said, /--budget-tokens|--budget-usd/, "a step budget suggests only the step flag");
  assert.match(said, /ended: applied/);
  allValid(agent, updates);
});

test("refused: a bad task file ends the prompt with the plan closed and the reason in the message", async (t) => {
  const w = world(t);
  const bad = path.join(w.ws, "bad.ioh.yaml");
  fs.writeFileSync(bad, "version: 1\ngoal: x\nbogus: 1\n");
  const agent = start(t, w);
  const { stop, updates } = await connect(agent, noPermission, async (cx, updates) => {
    await initialize(cx);
    const { sessionId } = await cx.request("session/new", { cwd: w.ws, mcpServers: [] });
    const res = await withDeadline(STEP, "prompt", agent, cx.request("session/prompt", { sessionId, prompt: taskPrompt(bad) }));
    await settle(cx);
    return { stop: res.stopReason, updates: [...updates] };
  });
  assert.equal(stop, "refusal");
  const plan = kinds(updates, "plan").at(-1);
  assert.ok(plan.entries.every((e) => e.status === "completed"), "no entry left open");
  assert.match(plan.entries[0].content, /^Refused: prompt\[0\]: task file: .*bogus/);
  assert.match(messages(updates), /Refused, nothing was run: .*bogus.*Fix it and send the prompt again/);
  allValid(agent, updates);
});

test("session/list lists a CLI run of the workspace, which loads by its id", async (t) => {
  const w = world(t, { exec: 0 });
  const cli = spawnSync(BIN, ["run", w.task, "--cassette", w.cassette, "--approve", "never"], { cwd: w.ws, env: w.env, encoding: "utf8", input: "" });
  assert.equal(cli.status, 0, cli.stderr);
  const agent = start(t, w);
  const { listed, updates } = await connect(agent, noPermission, async (cx, updates) => {
    await initialize(cx);
    const listed = await cx.request("session/list", { cwd: w.ws });
    const run = listed.sessions.find((s) => s.sessionId.startsWith("r-"));
    assert.ok(run, JSON.stringify(listed));
    await withDeadline(STEP, "session/load", agent, cx.request("session/load", { sessionId: run.sessionId, cwd: w.ws, mcpServers: [] }));
    await settle(cx);
    return { listed, updates: [...updates] };
  });
  assert.equal(listed.sessions.length, 1);
  assert.equal(listed.sessions[0].title, "Fix Mean: it divides by len(xs)-1");
  assert.equal(listed.sessions[0].cwd, fs.realpathSync(w.ws));
  assert.ok(kinds(updates, "tool_call").some((c) => c.title === "Edit stats.go"), "the CLI run replays");
  allValid(agent, updates);
});

test("streaming: the model's text arrives as several agent_message_chunks and is not sent again whole", async (t) => {
  const w = world(t, { exec: 0 });
  const agent = start(t, w);
  const updates = await connect(agent, (params) => choose(params, "allow_once"), async (cx, updates) => {
    await initialize(cx);
    const { sessionId } = await cx.request("session/new", { cwd: w.ws, mcpServers: [] });
    await withDeadline(STEP, "prompt", agent, cx.request("session/prompt", { sessionId, prompt: taskPrompt(w.task) }));
    await settle(cx);
    return [...updates];
  });
  const sentence = "Mean divides by len(xs)-1; fixing the divisor.";
  const chunks = kinds(updates, "agent_message_chunk").map((c) => c.content.text);
  assert.ok(!chunks.some((c) => c.includes(sentence)), "no chunk holds the whole turn: " + JSON.stringify(chunks));
  const said = chunks.join("");
  assert.equal(said.split(sentence).length - 1, 1, "the turn's text once, pieced together: " + JSON.stringify(said));
  assert.ok(said.includes("Reading the implementation.\n"), "each turn ends its message");
  allValid(agent, updates);
});

// SECOND is the file after the follow-up's edit on top of the first.
const SECOND = AFTER.replace("\tsum := 0.0\n", "\tif len(xs) == 0 {\n\t\treturn 0\n\t}\n\tsum := 0.0\n");

test("conversation: a second prompt continues the session's run, its edit adds to the pending change; load replays both turns", async (t) => {
  // The replay provider answers by the number of assistant turns in the
  // request: turns 3 and 4 are reached only if the follow-up's request
  // holds the first prompt's three turns.
  const turns = cassette({ exec: 0 }).turns;
  turns.push(
    { text: "Handling the empty slice too.", tool_calls: [{ name: "edit_file", arguments: { path: "stats.go", old: "\tsum := 0.0\n", new: "\tif len(xs) == 0 {\n\t\treturn 0\n\t}\n\tsum := 0.0\n" } }], usage: { input_tokens: 1700, output_tokens: 40 } },
    { tool_calls: [{ name: "finish", arguments: { summary: "Mean divides by len(xs) and returns 0 for no values." } }], usage: { input_tokens: 1800, output_tokens: 20 } },
  );
  const w = world(t, { cassette: { version: 1, turns } });
  const first = start(t, w);
  const { sid, updates, ended } = await connect(first, noPermission, async (cx, updates) => {
    await initialize(cx);
    const { sessionId } = await cx.request("session/new", { cwd: w.ws, mcpServers: [] });
    await cx.request("session/set_mode", { sessionId, modeId: "never" });
    await withDeadline(STEP, "first prompt", first, cx.request("session/prompt", { sessionId, prompt: taskPrompt(w.task) }));
    await settle(cx);
    const mid = updates.length;
    const second = await withDeadline(STEP, "follow-up", first, cx.request("session/prompt", { sessionId, prompt: text("Now also return 0 for an empty slice") }));
    assert.equal(second.stopReason, "end_turn");
    await settle(cx);
    assert.ok(kinds(updates.slice(mid), "tool_call").every((c) => c.title !== "Read stats.go"), "the follow-up did not start over");
    await withDeadline(STEP, "/approve", first, cx.request("session/prompt", { sessionId, prompt: text("/approve") }));
    const ended = [...messages(updates).matchAll(/Run (r-[0-9a-f]+) ended: (\w+)/g)].map((m) => [m[1], m[2]]);
    await settle(cx);
    return { sid: sessionId, updates: [...updates], ended };
  });
  assert.equal(read(w.file), SECOND, "one change holds both turns' edits");
  assert.equal(ended.length, 3, JSON.stringify(ended));
  assert.ok(ended.every(([id]) => id === ended[0][0]), "both prompts and the approval are one run: " + JSON.stringify(ended));
  assert.deepEqual(ended.map(([, o]) => o), ["awaiting_approval", "awaiting_approval", "applied"]);
  allValid(first, updates);
  first.child.stdin.end();
  await first.exited;

  const second = start(t, w);
  const replayed = await connect(second, noPermission, async (cx, updates) => {
    await initialize(cx);
    await withDeadline(STEP, "session/load", second, cx.request("session/load", { sessionId: sid, cwd: w.ws, mcpServers: [] }));
    await settle(cx);
    return [...updates];
  });
  assert.deepEqual(kinds(replayed, "user_message_chunk").map((c) => c.content.text), ["Fix Mean: it divides by len(xs)-1", "Now also return 0 for an empty slice"]);
  assert.match(messages(replayed), /Mean divides by len\(xs\)-1; fixing the divisor\.\n[\s\S]*Handling the empty slice too\.\n/, "both turns replay, in order");
});
