// Package ioh is ioh-lsp's library surface: what a program embedding the
// agent needs, and the one package of this module it should import.
//
// An engine (New) runs task contracts (ParseContract, LoadContract) in
// one workspace: the model loop, the policy, the budgets, the trace
// store, and each check run in the OS sandbox, as `ioh-lsp run` does.
// The sandbox is usable on its own: NewRunner runs one command
// contained (give its Spec a View: DefaultView is the engine's; a Spec
// without one reads nothing of the host but its own directories), and
// NewSandbox is the adapter the engine runs commands through.
//
// A program that uses the sandbox must call Init first in main and
// return when it reports true: the sandbox's stages are copies of the
// program, re-executed.
//
// What is stable: the names declared in this package and their
// documented behaviour. The types they alias (from internal/agent,
// internal/agent/contract, internal/sandbox and internal/sandboxexec) may
// gain fields and methods; the packages behind them are internal (a
// program outside this module cannot import them) and are not covered.
// See README.md in this directory.
package ioh
