// Package agent runs a task contract to a verified result: the model loop
// over a provider, tools over a workspace ChangeSet, budgets, retries, the
// permission policy, sandboxed verification, sub-agents, a durable trace and
// crash-safe resume.
//
// It knows nothing of LSP: it emits typed events to a sink and asks for
// consent through an Approver, both declared here; the CLI and the language
// server implement them.
package agent
