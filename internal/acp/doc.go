// Package acp is the Agent Client Protocol (v1) face of ioh-lsp: an ACP
// agent over stdio that editors' agent panels (Zed, JetBrains,
// CodeCompanion, avante.nvim, agent-shell) start as `ioh-lsp acp`.
//
// It runs on the same engine as the language server: each session is a
// workspace with its own harness built by the caller (cmd/ioh-lsp wires it
// through internal/wire), one trace store per workspace, one configuration.
// A prompt becomes a run; the run's typed events become session/update
// notifications (message chunks, a plan from the contract's checks, tool
// calls with diffs, verification as execute-kind calls, usage against the
// budget); Ask-tier acts and the final verified change go through
// session/request_permission, and nothing reaches the disk before the
// change is allowed.
//
// A session has modes (modes.go: the approval policy ask, auto or never,
// as --approve on the command line; session/set_mode and the mode config
// option) and a model config option (the configuration's model and its
// fallbacks; the engine is built again on a change). A prompt whose text
// starts with /name is a slash command (commands.go: /help, /runs,
// /diff, /approve, /reject, /resume, /undo) answered in the panel, never
// a new run. A run its budget stopped is offered a larger budget through
// a permission request (raise.go) and goes on in the same turn.
//
// The client's MCP servers (session/new's mcpServers: stdio and http
// entries) are converted in mcp.go to the engine's MCP entries with every
// tool exposed, and contained like configured ones: each call is an `mcp`
// act (default ask, so a session/request_permission), a stdio server runs
// in the sandbox with no network, its command's directory readable, and
// the sandbox refuses secret-looking env names, an http server's host is a `net` act the policy must allow;
// http headers are not sent. A request's `_meta.traceparent` and
// `_meta.tracestate` (the prompt's, else session/new's or session/load's)
// go to agent.WithTraceContext before the run starts, so the run's span
// continues the client's trace; a malformed one is dropped there.
//
// The framing is newline-delimited JSON-RPC 2.0 (one message a line, no
// Content-Length headers): internal/jsonrpc's connection with its
// LineFramer, the one the language server speaks with Content-Length
// headers; rpc.go routes it to the Server. Protocol types are in types.go
// and converted only here.
//
// The community Go SDK (github.com/coder/acp-go-sdk v0.13.0) was evaluated
// and not used: its connection logs and drops a line that is not JSON
// where JSON-RPC wants a -32700 answer, ends the whole connection on a line
// over 10 MiB, and closes it when its fixed notification queue fills; its
// generated types (about 9,000 lines of unions with pointer variants) cover
// the whole protocol where this agent speaks about fifteen messages. The
// types here are checked on the wire by the official TypeScript SDK, whose
// schema validation drops any update that does not conform (test/acp).
package acp
