// Package agent runs a task contract to a verified result: the model loop
// over a provider, tools over a workspace ChangeSet, budgets, retries, the
// permission policy, sandboxed verification, sub-agents, a durable trace and
// crash-safe resume.
//
// It knows nothing of LSP: it emits typed events to a sink and asks for
// consent through an Approver, both declared here; the CLI and the language
// server implement them.
//
// # Embedding
//
// Build a Harness with New from a workspace.Root, a trace.Store, a
// ProviderFactory, a contain.Sandbox, an Approver and an event.Sink (see the
// package Example); Start runs a contract in the background and Resume
// continues a stopped one. internal/wire builds all of it from the user's
// configuration for the CLI and the language server.
//
// # The loop
//
// Each step sends the whole transcript (system prompt, then every turn in
// order, never rewritten, so each request is a byte-identical extension of
// the previous one and caches well), runs the tool calls of the answer
// (consecutive read-only calls and spawn_agent calls in parallel, each
// checked against the policy first, Ask-tier acts put to the Approver), and
// commits the step in one transaction: transcript delta, usage and cost,
// verdicts, the change set when it changed, and the resume state.
//
// A step is refused before it is sent when it could cross a budget: steps,
// tokens (its estimated input plus the output it may produce; the request's
// max_tokens is trimmed to what is left), dollars, or wall time counted from
// the run's first start. Sub-agents draw from one tree-wide Ledger.
//
// The same calls three steps running with an unchanged change set get one
// replan prompt; the next such stall ends the run as stalled. A context
// overflow elides old tool results from the requests (the stored transcript
// stays whole) and retries once.
//
// # Finishing
//
// finish verifies the change set when the contract has checks. A failed
// verification is returned to the model as the finish call's result, so it
// can fix the change while budget remains; after two such answers the next
// failure ends the run as verification_failed. Checks that already pass on
// the unchanged tree (red/green) end it at once: editing cannot fix that. A
// verified (or, without checks, unverified) change goes to the Approver;
// Defer leaves it pending for Approve or Reject by run id. A run that
// finishes with no change after the policy or the user denied acts ends as
// denied.
//
// # Sub-agents
//
// spawn_agent runs a child on a clone of the parent's change set under the
// parent's policy plus a narrowing layer (its write scope), with a share of
// the parent's budget (half of what is left unless it asks for less).
// Depth, total and concurrency caps hold across the tree: a sub-agent
// holds a working slot while it works and gives it back while it waits for
// its own sub-agents, so spawns queue rather than deadlock. A finished
// child's changes merge into the parent's; a conflict is reported to the
// parent instead. Children are not resumed on their own: after a crash the
// parent redoes the step that spawned them.
package agent
