package ioh

import (
	"log/slog"

	"github.com/ioh-lsp/ioh-lsp/internal/sandbox"
	"github.com/ioh-lsp/ioh-lsp/internal/sandboxexec"
)

// Runner runs one command contained in the strongest sandbox tier that
// works here (docs/sandbox-tiers.md) and reports each mechanism that
// applied.
type Runner = sandbox.Runner

// Spec is one command to run contained: argv, directory, the writable
// and readable roots, network, limits, streams (docs/sandbox.md).
type Spec = sandbox.Spec

// SandboxOutcome is what a contained command did: exit code, signal, the
// cap it hit, the tier and mechanisms.
type SandboxOutcome = sandbox.Outcome

// Limits are a contained command's caps.
type Limits = sandbox.Limits

// NewRunner returns a runner; log (nil: none) gets its downgrades. By
// default each run sets itself up and leaves nothing behind; a caller
// that runs many commands passes WithPool.
func NewRunner(log *slog.Logger, opts ...RunnerOption) *Runner {
	return sandbox.NewRunner(log, opts...)
}

// Pool is what a long-lived caller keeps between its runs so the next
// one starts sooner (stages started ahead, spares made ahead). Close it
// when done.
type Pool = sandbox.Pool

// NewPool returns an empty pool.
func NewPool() *Pool { return sandbox.NewPool() }

// RunnerOption configures a Runner.
type RunnerOption = sandbox.RunnerOption

// WithPool makes a Runner's runs go through p.
func WithPool(p *Pool) RunnerOption { return sandbox.WithPool(p) }

// Sandbox is the adapter through which an engine runs every command and
// check: it stages the run's change set over the workspace and runs the
// command with a Runner.
type Sandbox = sandboxexec.Adapter

// SandboxOptions configure a Sandbox: extra masked, writable and
// readable paths, the weakest tier allowed, default limits.
type SandboxOptions = sandboxexec.Options

// NewSandbox returns the adapter o describes.
func NewSandbox(o SandboxOptions) (*Sandbox, error) { return sandboxexec.New(o) }
