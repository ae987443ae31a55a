package ioh

import (
	"github.com/ioh-lsp/ioh-lsp/internal/sandbox"
	"github.com/ioh-lsp/ioh-lsp/internal/sandbox/policy"
)

// View is what a contained command may read of the host (Spec.View),
// what stays hidden in that and what stays read-only in its writable
// roots. The zero View reads nothing but the run's own directories: give
// a Spec DefaultView's.
type View = sandbox.View

// ViewOptions are a run's inputs to the default view: its extra
// environment (where its toolchains are), extra readable and masked
// paths.
type ViewOptions = policy.Options

// DefaultView is the view ioh gives its own commands and checks: the
// system directories, the toolchains, the directories on PATH and
// o.Readable; the secrets of every home, ioh's own state and /etc's
// secrets masked; .git, .ioh, .vscode, .idea and .github/workflows kept
// read-only (docs/sandbox-tiers.md#the-read-view). Build it for each
// Spec: a secret made since the last one is masked in the next.
func DefaultView(o ViewOptions) View { return policy.Default(o) }
