// Package lsp is the language server: agent tasks as code actions, commands
// and code lenses; progress; approval through one annotated
// workspace/applyEdit; the run's trace as diagnostics.
//
// Protocol types stop here: the agent, workspace and sandbox packages never
// see a URI or a UTF-16 position.
package lsp
