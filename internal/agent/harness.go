package agent

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/ioh-lsp/ioh-lsp/internal/agent/contain"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/contract"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/event"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/model"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/policy"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/redact"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/tools"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/trace"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/verify"
	"github.com/ioh-lsp/ioh-lsp/internal/workspace"
)

// ProviderFactory builds the provider of a contract (its model section,
// fallbacks and retry policy) for one agent of a run; the provider tells
// report about every failed attempt it retries or falls back from, and
// the harness traces it.
type ProviderFactory func(c *contract.Contract, report RetryReporter) (model.Provider, error)

// RetryReporter receives a provider's failed attempts.
type RetryReporter func(RetryEvent)

// RetryEvent is one failed model call attempt and what happens next.
type RetryEvent struct {
	Provider string
	Model    string
	Attempt  int
	Class    model.Class
	Err      string
	Delay    time.Duration
	// Next is the fallback provider tried next ("" for the same one).
	Next string
}

// VerifyFunc runs a contract's checks against the workspace with changes
// staged; verify.RunWith is the real one (and the default).
type VerifyFunc func(ctx context.Context, o verify.Options) (*verify.Report, error)

// CostFunc prices one call's usage in USD for the provider and model that
// answered, and says what priced it (model.CostTable or model.CostConfig;
// model.CostUnknown when nothing knows the model).
type CostFunc func(provider, model string, u model.Usage) (float64, model.CostSource)

// Options are the harness's dependencies.
type Options struct {
	Root      *workspace.Root
	Store     *trace.Store
	Providers ProviderFactory
	Sandbox   contain.Sandbox
	Approver  Approver
	Events    event.Sink
	// Layers are the policy layers below the task contract's (built-in,
	// user, editor, workspace), already trust-filtered. A built-in layer
	// without extra protected paths is added when none is given.
	Layers []policy.LayerRules
	Logger *slog.Logger

	// Verify runs checks; nil uses verify.RunWith.
	Verify VerifyFunc
	// Cost prices usage; a call the provider reported a charge for is not
	// priced here. nil prices nothing: every other call's cost is unknown
	// (and a run with a dollar budget then cannot start).
	Cost CostFunc
	// Model resolves the model a run calls: per-invocation overrides
	// (command-line flags) over the contract's choice, and the provider's
	// default name. It is applied once, after Prepare on a new run and to
	// the stored contract on resume, before the provider is built, the
	// run is priced and run_started is recorded. nil keeps the contract's.
	Model func(contract.Model) contract.Model
	// MaxTokens caps each call's output tokens (default 8192).
	MaxTokens int
	// ReviewChanges shows a root run's model its diff at its first finish
	// with a change and verifies only at the next one (diffreview.go).
	ReviewChanges bool
	// NoMasking keeps every tool result whole in the requests: observation
	// masking (mask.go) never starts; a request the provider refuses as
	// too long is still compacted. For measuring the harness (eval).
	NoMasking bool
	// LeaseTTL is how long a lease lasts between renewals (default 30s,
	// or $IOH_LEASE_TTL: trace.LeaseTTL).
	LeaseTTL time.Duration
	// Owner names this process for leases (default host:pid:random).
	Owner string
	// Prepare, when set, adjusts a contract before a run starts (defaults
	// from configuration, keys an untrusted task file may not set) and
	// returns warnings, which go into the trace.
	Prepare func(c *contract.Contract) ([]string, error)
	// Secrets are values (API keys) that must never reach a prompt, the
	// trace or an event: tool results and model text are redacted before
	// they enter the transcript. The store redacts them too.
	Secrets []string
	// MCP supplies the tools of MCP servers (mcptool.Manager) on top of
	// the built-in ones; nil: none.
	MCP ToolSource
}

// ToolSource supplies tools beyond the built-in set. judge is the run's
// policy: a source asks it before it reaches anything (an MCP server's
// host) and leaves out what it may not reach. Warnings say what was left
// out; the source also logs them.
type ToolSource interface {
	Tools(ctx context.Context, judge func(act policy.Act, target string) policy.Verdict) ([]tools.Tool, []string)
}

// Harness runs task contracts. It is safe for concurrent use: each run is
// its own goroutine tree, tracked so Cancel can reach it.
type Harness struct {
	opts   Options
	log    *slog.Logger
	redact redact.Redactor

	mu      sync.Mutex
	running map[string]context.CancelFunc
	live    map[string]*Run                    // runs in flight in this process
	offers  map[string]context.CancelCauseFunc // runs whose change the approver is asked about (withdraw)
	urls    []string                           // configured URLs holding a credential (AddConfigured)
}

// New returns a harness over o. Root, Store and Providers are required.
func New(o Options) (*Harness, error) {
	if o.Root == nil || o.Store == nil || o.Providers == nil {
		return nil, errors.New("new harness: Root, Store and Providers are required")
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.MaxTokens <= 0 {
		o.MaxTokens = 8192
	}
	if o.LeaseTTL <= 0 {
		ttl, err := trace.LeaseTTL(os.Getenv)
		if err != nil {
			return nil, fmt.Errorf("new harness: %w", err)
		}
		o.LeaseTTL = ttl
	}
	if o.Owner == "" {
		o.Owner = trace.Owner(newID("")[:8])
	}
	if o.Approver == nil {
		o.Approver = deferApprover{}
	}
	if o.Verify == nil {
		o.Verify = verify.RunWith
	}
	hasBuiltin := false
	for _, l := range o.Layers {
		hasBuiltin = hasBuiltin || l.Layer == policy.LayerBuiltin
	}
	if !hasBuiltin {
		o.Layers = append([]policy.LayerRules{policy.Builtin(nil)}, o.Layers...)
	}
	if _, err := policy.New(o.Layers...); err != nil {
		return nil, fmt.Errorf("new harness: %w", err)
	}
	h := &Harness{opts: o, log: o.Logger, redact: redact.New(o.Secrets), running: map[string]context.CancelFunc{},
		live: map[string]*Run{}, offers: map[string]context.CancelCauseFunc{}}
	h.opts.Approver = offerApprover{Approver: o.Approver, h: h}
	return h, nil
}

// AddSecrets makes the harness, its trace store and every Redactor got
// from it redact more values from now on (the credentials of the URLs a
// contract configures).
func (h *Harness) AddSecrets(secrets ...string) {
	h.redact.Add(secrets...)
	h.opts.Store.AddSecrets(secrets...)
}

// AddConfigured makes the credentials of every URL in a JSON document
// (the configuration, a contract) secrets (AddSecrets) and remembers
// those URLs whole, so a stored contract whose base_url the store
// redacted gets its credential back on resume while the configuration
// still holds it.
func (h *Harness) AddConfigured(doc []byte) {
	h.AddSecrets(redact.URLSecretsIn(doc)...)
	urls := redact.CredentialURLs(doc)
	if len(urls) == 0 {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, u := range urls {
		if !slices.Contains(h.urls, u) {
			h.urls = append(h.urls, u)
		}
	}
}

// unredactContract puts the credentials of configured URLs back into a
// stored contract (redact.Redactor.Unredact).
func (h *Harness) unredactContract(doc []byte) []byte {
	h.mu.Lock()
	urls := append([]string(nil), h.urls...)
	h.mu.Unlock()
	return h.redact.Unredact(doc, urls)
}

// Redactor is the harness's redactor: every secret it keeps out of the
// trace, including those learned later (AddSecrets). What prints a run's
// events redacts them with it.
func (h *Harness) Redactor() redact.Redactor { return h.redact }

// Result is a run's end state.
type Result struct {
	RunID   string
	Outcome Outcome
	Summary string
	Steps   int
	Usage   model.Usage
	CostUSD float64
	// Unpriced counts this run's calls nothing could price: when it is
	// not zero, CostUSD covers only the priced ones and the cost is
	// unknown.
	Unpriced int
	Changes  *workspace.ChangeSet
	Report   *verify.Report
	Started  time.Time
	Err      error // the failure behind provider_failed, denied, ...
	// Pending: the change awaits approval (Approve or Reject by RunID);
	// false for a run deferred on an act (Resume continues it).
	Pending bool
	// Network summarises the connections its commands made through the
	// run's network proxy (event.NetSummary.Text); "" when none.
	Network string
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

func newID(prefix string) string {
	var b [8]byte
	rand.Read(b[:])
	return prefix + hex.EncodeToString(b[:])
}

// Start begins a run of c in the background; ctx bounds the whole run.
// The run's row exists in the store when Start returns.
func (h *Harness) Start(ctx context.Context, c *contract.Contract) (*Run, error) {
	a, err := h.newRoot(ctx, c)
	if err != nil {
		return nil, err
	}
	return h.launch(ctx, a), nil
}

// Resume continues run id from its last committed step. A run that already
// ended returns at once with its stored result (a no-op); a run another
// live process drives is refused (trace.ErrLeased).
func (h *Harness) Resume(ctx context.Context, id string) (*Run, error) {
	return h.ResumeWith(ctx, id, contract.Budget{})
}

// ResumeWith is Resume with a larger budget: each non-zero field of raise
// replaces the run's limit, and may only raise it (lowering one is an
// ErrConfig error). A run that ended budget_exceeded then continues from
// its last committed step: the step its budget refused was never sent, so
// nothing is charged twice and no tool call repeats. The raised budget is
// recorded with the run (a later resume keeps it) and in the trace.
func (h *Harness) ResumeWith(ctx context.Context, id string, raise contract.Budget) (*Run, error) {
	return h.resume(ctx, id, raise, nil)
}

// resume is ResumeWith; turn, when not nil, adds the user's next message
// to the run before it goes on (RejectWithFeedback, Continue).
func (h *Harness) resume(ctx context.Context, id string, raise contract.Budget, turn *userTurn) (*Run, error) {
	row, err := h.opts.Store.Run(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("resume %s: %w", id, err)
	}
	if row.Parent != "" {
		return nil, fmt.Errorf("resume %s: a sub-agent run is resumed through its root run %s", id, row.Root)
	}
	h.mu.Lock()
	_, busy := h.running[id]
	if !busy {
		h.running[id] = func() {} // reserved until launch registers the run
	}
	h.mu.Unlock()
	if busy {
		return nil, fmt.Errorf("resume %s: it is running in this process: %w", id, trace.ErrLeased)
	}
	reserved := true
	defer func() {
		if reserved {
			h.mu.Lock()
			delete(h.running, id)
			h.mu.Unlock()
		}
	}()
	raising := raise != (contract.Budget{})
	var raised *event.Event
	if raising {
		if raised, err = h.raise(row, raise); err != nil {
			return nil, fmt.Errorf("resume %s: %w", id, err)
		}
		raising = raised != nil
	}
	if turn != nil && turn.budget != nil {
		if err := turn.budget(ctx, row); err != nil {
			return nil, fmt.Errorf("resume %s: %w", id, err)
		}
	}
	if o := Outcome(row.Outcome); !o.resumable(raising || turn != nil) {
		r := &Run{id: id, done: make(chan struct{})}
		r.res = h.storedResult(row)
		close(r.done)
		return r, nil
	}
	a, err := h.restore(ctx, row)
	if err != nil {
		return nil, fmt.Errorf("resume %s: %w", id, err)
	}
	if err := a.restoreTurns(ctx); err != nil {
		h.opts.Store.Release(context.WithoutCancel(ctx), id, h.opts.Owner)
		return nil, fmt.Errorf("resume %s: %w", id, err)
	}
	var resumed []event.Event
	if raised != nil {
		resumed = append(resumed, *raised)
	}
	if turn != nil {
		resumed = append(resumed, turn.take(a))
	}
	if Outcome(row.Outcome) == OutcomeProviderFailed {
		resumed = append(resumed, event.New(id, "", 0, &event.Warning{Message: fmt.Sprintf(
			"resumed after provider_failed (%s): the provider is called again from step %d, the step after the last committed one",
			oneLineErr(row.Error), a.totals.Steps+1)}))
	}
	if len(resumed) > 0 {
		// Recorded under the lease restore took: the run is in flight
		// again, with its new limits (if raised) in its state.
		for i := range resumed {
			resumed[i].Step = a.totals.Steps
		}
		if err := h.opts.Store.SetOutcome(ctx, id, string(OutcomeRunning), "", "", a.st.encode(), resumed...); err != nil {
			h.opts.Store.Release(context.WithoutCancel(ctx), id, h.opts.Owner)
			return nil, fmt.Errorf("resume %s: record the resumption: %w", id, err)
		}
		for _, ev := range resumed {
			a.emit(ev)
		}
	}
	reserved = false
	return h.launch(ctx, a), nil
}

// launch takes the run's goroutine: it holds the lease (renewed in the
// background until the run ends) and records the outcome.
func (h *Harness) launch(ctx context.Context, a *agentRun) *Run {
	r := &Run{id: a.id, done: make(chan struct{})}
	rctx, cancelCause := context.WithCancelCause(ctx)
	cancel := func() { cancelCause(nil) }
	h.mu.Lock()
	h.running[a.id] = cancel
	h.live[a.id] = r
	h.mu.Unlock()
	go func() {
		defer close(r.done)
		defer func() {
			h.mu.Lock()
			delete(h.running, a.id)
			delete(h.live, a.id)
			h.mu.Unlock()
			cancel()
		}()
		stopRenew := h.keepLease(rctx, a.id, cancelCause)
		a.redFirst(rctx) // redphase.go: the failing checks before the first call
		r.res = a.drive(rctx)
		stopRenew()
		cctx, ccancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer ccancel()
		if err := h.opts.Store.Release(cctx, a.id, h.opts.Owner); err != nil {
			h.log.Warn("release lease", "run", a.id, "err", err)
		}
	}()
	return r
}

// keepLease renews the lease every third of its TTL until stopped. A lease
// another process has taken (this one stalled past its expiry and the run
// was resumed elsewhere) stops the run through lost, with a cause wrapping
// trace.ErrLeased: it must not drive on, nor record an outcome, over the
// process that now drives it.
func (h *Harness) keepLease(ctx context.Context, id string, lost context.CancelCauseFunc) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(h.opts.LeaseTTL / 3)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				err := h.opts.Store.Renew(ctx, id, h.opts.Owner, h.opts.LeaseTTL)
				if err != nil && ctx.Err() == nil {
					if errors.Is(err, trace.ErrLeased) {
						lost(fmt.Errorf("lost the lease of %s to another process: %w", id, err))
						return
					}
					h.log.Warn("renew lease", "run", id, "err", err)
				}
			}
		}
	}()
	return func() { cancel(); <-done }
}

// Cancel cancels a run in flight in this process (and its sub-agents).
func (h *Harness) Cancel(id string) bool {
	h.mu.Lock()
	cancel, ok := h.running[id]
	h.mu.Unlock()
	if ok {
		cancel()
	}
	return ok
}

// storedResult rebuilds a Result from a run row, its change set
// restored.
func (h *Harness) storedResult(row *trace.RunRow) *Result {
	st, err := decodeState(row.State)
	if err != nil {
		st = nil
	}
	res := resultOf(row, st)
	if len(row.Changes) > 0 {
		if cs, err := h.unmarshalChanges(row.Changes); err == nil {
			res.Changes = cs
		}
	}
	return &res
}

// resultOf is the Result a run row and its decoded state st (nil when it
// does not decode) record, without the change set.
func resultOf(row *trace.RunRow, st *runState) Result {
	res := Result{
		RunID: row.ID, Outcome: Outcome(row.Outcome), Summary: row.Summary, Steps: row.Totals.Steps,
		Usage: model.Usage{InputTokens: row.Totals.InputTokens, OutputTokens: row.Totals.OutputTokens,
			CacheReadTokens: row.Totals.CacheReadTokens, CacheWriteTokens: row.Totals.CacheWriteTokens},
		CostUSD: row.Totals.CostUSD, Started: row.FirstStarted,
	}
	res.Err = storedErr(res.Outcome, row.Error, st)
	if st != nil {
		res.Report = st.Report
		res.Unpriced = st.Unpriced
		res.Pending = res.Outcome == OutcomeAwaitingApproval && st.Phase == phaseProposal
	}
	return res
}

// oneLineErr is a recorded error on one line, at most 200 bytes.
func oneLineErr(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 200 {
		s = strings.ToValidUTF8(s[:200], "") + "…"
	}
	return s
}
