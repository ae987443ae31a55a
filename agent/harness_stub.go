package agent

// This file fixes the harness API that the CLI and the language server code
// against while the engine is being written. Its owner replaces it with the
// real implementation (same signatures).

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/ioh-lsp/ioh-lsp/agent/contain"
	"github.com/ioh-lsp/ioh-lsp/agent/contract"
	"github.com/ioh-lsp/ioh-lsp/agent/model"
	"github.com/ioh-lsp/ioh-lsp/agent/policy"
	"github.com/ioh-lsp/ioh-lsp/agent/trace"
	"github.com/ioh-lsp/ioh-lsp/agent/verify"
	"github.com/ioh-lsp/ioh-lsp/workspace"
)

var errTODO = errors.New("agent: not implemented yet")

// ProviderFactory builds a provider for one model selection.
type ProviderFactory func(m contract.Model) (model.Provider, error)

// Options are the harness's dependencies.
type Options struct {
	Root      *workspace.Root
	Store     *trace.Store
	Providers ProviderFactory
	Sandbox   contain.Sandbox
	Approver  Approver
	Events    trace.Sink
	// Layers are the policy layers below the task contract's (built-in,
	// user, editor, workspace), already trust-filtered.
	Layers []policy.LayerRules
	Logger *slog.Logger
}

// Harness runs task contracts.
type Harness struct{ opts Options }

// New returns a harness.
func New(o Options) (*Harness, error) { return &Harness{opts: o}, nil }

// Result is a run's end state.
type Result struct {
	RunID   string
	Outcome Outcome
	Summary string
	Steps   int
	Usage   model.Usage
	CostUSD float64
	Changes *workspace.ChangeSet
	Report  *verify.Report
	Started time.Time
	Err     error // the failure behind provider_failed, denied, ...
}

// Run is a run in flight.
type Run struct {
	id   string
	done chan struct{}
	res  *Result
}

// ID is the run's id ("r-" + random).
func (r *Run) ID() string { return r.id }

// Wait blocks until the run ends.
func (r *Run) Wait() *Result { <-r.done; return r.res }

// Done is closed when the run ends.
func (r *Run) Done() <-chan struct{} { return r.done }

// Start begins a run of c in the background; ctx bounds the whole run.
func (h *Harness) Start(ctx context.Context, c *contract.Contract) (*Run, error) {
	return nil, errTODO
}

// Resume continues run id from its last committed step.
func (h *Harness) Resume(ctx context.Context, id string) (*Run, error) { return nil, errTODO }

// Approve applies a pending verified change of run id.
func (h *Harness) Approve(ctx context.Context, id string) (*Result, error) { return nil, errTODO }

// Reject drops a pending change of run id.
func (h *Harness) Reject(ctx context.Context, id, reason string) (*Result, error) {
	return nil, errTODO
}

// Cancel cancels a run in flight in this process.
func (h *Harness) Cancel(id string) bool { return false }
