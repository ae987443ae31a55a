package agent

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/ioh-lsp/ioh-lsp/internal/agent/event"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/model"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/trace"
	"github.com/ioh-lsp/ioh-lsp/internal/workspace"
)

// conclude records the run's outcome (and the state a later resume or
// approval needs) and returns the result.
func (a *agentRun) conclude(ctx context.Context, e end) *Result {
	if c := context.Cause(ctx); c != nil && errors.Is(c, trace.ErrLeased) {
		// Another process drives the run now (keepLease): this one stops
		// without recording anything over it.
		e = end{OutcomeInterrupted, c}
	}
	errText := ""
	if e.err != nil {
		errText = e.err.Error()
	}
	a.st.StopLimit = limitOf(e.err)
	out := &event.Outcome{Outcome: string(e.outcome), Steps: a.totals.Steps, Tokens: a.totals.Tokens(), CostUSD: a.totals.CostUSD,
		Error: errText, Summary: a.st.Summary, Limit: string(a.st.StopLimit)}
	ev := a.event(out)
	ev.Step = a.totals.Steps
	netEvs, netSum := a.closeNet() // netaccess.go
	out.Network = netSum
	for i := range netEvs {
		netEvs[i].Step = ev.Step
	}
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	// An interrupted run records nothing more: the trace keeps it running
	// as of its last committed step, which is what resume continues.
	if e.outcome != OutcomeInterrupted {
		if err := a.h.opts.Store.SetOutcome(cctx, a.id, string(e.outcome), a.st.Summary, errText, a.st.encode(), append(netEvs, ev)...); err != nil {
			if !errors.Is(err, trace.ErrStorage) || e.outcome == OutcomeApplied {
				// An applied change is on disk whatever the trace says.
				a.h.log.Error("record outcome", "run", a.id, "outcome", e.outcome, "err", err)
			} else {
				e = end{OutcomeInterrupted, fmt.Errorf("record outcome %s: %w", e.outcome, err)}
				out.Outcome, out.Error, out.Limit = string(e.outcome), e.err.Error(), ""
			}
		}
	}
	for _, e := range netEvs {
		a.emit(e)
	}
	a.emit(ev)
	return &Result{
		RunID: a.id, Outcome: e.outcome, Summary: a.st.Summary, Steps: a.totals.Steps,
		Usage: model.Usage{InputTokens: a.totals.InputTokens, OutputTokens: a.totals.OutputTokens,
			CacheReadTokens: a.totals.CacheReadTokens, CacheWriteTokens: a.totals.CacheWriteTokens},
		CostUSD: a.totals.CostUSD, Unpriced: a.st.Unpriced, Changes: a.cs, Report: a.st.Report, Started: a.started, Err: e.err,
		Pending: e.outcome == OutcomeAwaitingApproval && a.st.Phase == phaseProposal,
		Network: netSum,
	}
}

// Approve applies the pending change of run id (awaiting approval of its
// change) and records the run as applied. When a file it changes was
// changed in the workspace since the agent read it, nothing is applied:
// the conflict is recorded (a warning event naming the files), the change
// stays pending, and the Result says awaiting_approval with the
// *workspace.ConflictError; approve again once the files are as the agent
// saw them, or reject.
func (h *Harness) Approve(ctx context.Context, id string) (*Result, error) {
	return h.settle(ctx, id, func(a *agentRun) end { return a.apply() }, "approved")
}

// Reject drops the pending change of run id and records it as rejected.
func (h *Harness) Reject(ctx context.Context, id, reason string) (*Result, error) {
	return h.settle(ctx, id, func(a *agentRun) end {
		return end{OutcomeRejected, fmt.Errorf("change rejected: %s", orNone(reason))}
	}, "rejected: "+orNone(reason))
}

// ErrConfig marks a run that could not start because of its contract or
// configuration (no goal, a bad policy rule, an unknown or unconfigured
// provider, an unusable --record path): a usage error, not a failed run.
var ErrConfig = errors.New("bad task configuration")

// configError wraps a setup failure so errors.Is(err, ErrConfig) holds
// while the message stays the underlying one.
type configError struct{ err error }

func (e configError) Error() string        { return e.err.Error() }
func (e configError) Unwrap() error        { return e.err }
func (e configError) Is(target error) bool { return target == ErrConfig }

// ErrNotPending: the run has no change awaiting approval.
var ErrNotPending = errors.New("run has no change awaiting approval")

func (h *Harness) settle(ctx context.Context, id string, f func(*agentRun) end, what string) (*Result, error) {
	row, err := h.opts.Store.Run(ctx, id)
	if err != nil {
		return nil, err
	}
	st, err := decodeState(row.State)
	if err != nil {
		return nil, err
	}
	if Outcome(row.Outcome) == OutcomeAwaitingApproval && st.Phase != phaseProposal {
		return nil, fmt.Errorf("%s waits for approval of an act, not of its change (answer it with AnswerAct, then resume it): %w", id, ErrNotPending)
	}
	if Outcome(row.Outcome) != OutcomeAwaitingApproval || st.Phase != phaseProposal {
		return nil, fmt.Errorf("%s (outcome %s): %w", id, row.Outcome, ErrNotPending)
	}
	if err := h.opts.Store.Acquire(ctx, id, h.opts.Owner, h.opts.LeaseTTL); err != nil {
		return nil, err
	}
	defer h.opts.Store.Release(context.WithoutCancel(ctx), id, h.opts.Owner)
	cs, err := h.unmarshalChanges(row.Changes)
	if err != nil {
		return nil, fmt.Errorf("restore change set of %s: %w", id, err)
	}
	a := &agentRun{h: h, id: id, rootID: row.Root, st: st, cs: cs, totals: row.Totals, started: row.FirstStarted, sink: h.opts.Events}
	if what == "approved" {
		if res, err := a.keepOnConflict(ctx, row); res != nil || err != nil {
			return res, err
		}
	}
	ap := a.event(&event.Approval{Change: true, Answer: what})
	ap.Step = row.Totals.Steps
	if err := h.opts.Store.AppendEvents(ctx, ap); err != nil {
		return nil, err
	}
	a.emit(ap)
	e := f(a)
	st.Phase = phaseLoop
	return a.conclude(ctx, e), nil
}

// keepOnConflict checks the pending change against the workspace before
// it is approved. Files it changes that were edited since are rebased
// onto their current text by the editor path's three-way merge
// (ChangeSet.Rebase) and, when the change was verified, verified again;
// a.cs becomes the rebased change (nil, nil: go on and apply it). Where
// the user's hunks overlap the agent's, or the rebased change fails its
// checks, it records why and returns the run as it stays, pending.
func (a *agentRun) keepOnConflict(ctx context.Context, row *trace.RunRow) (*Result, error) {
	files, err := a.cs.Conflicts()
	if err != nil {
		return nil, fmt.Errorf("check %s against the workspace: %w", a.id, err)
	}
	if len(files) == 0 {
		return nil, nil
	}
	ncs, rebased, conflicts, err := a.cs.Rebase()
	if err != nil {
		return nil, fmt.Errorf("rebase %s onto the workspace: %w", a.id, err)
	}
	if len(conflicts) > 0 {
		var where []string
		files = files[:0]
		for _, c := range conflicts {
			files = append(files, c.Path)
			where = append(where, c.Describe())
		}
		cerr := fmt.Errorf("%w; your edits overlap the agent's at %s", &workspace.ConflictError{Files: files}, strings.Join(where, "; "))
		return a.keepPending(ctx, row, cerr, fmt.Sprintf("approve: %v; nothing was applied and the change stays pending "+
			"(make those lines as the agent saw them, or edit elsewhere, and approve again; or reject)", cerr))
	}
	note := "approve: " + strings.Join(rebased, ", ") + " changed since the agent read them; the change was rebased onto your edits (three-way merge, no overlapping hunks)"
	if a.st.Report != nil {
		rep, err := a.h.Reverify(ctx, a.id, ncs.Changes())
		if err != nil {
			return nil, fmt.Errorf("verify %s rebased onto your edits: %w", a.id, err)
		}
		if rep != nil && !rep.Passed {
			msg := "rebased onto your edits of " + strings.Join(rebased, ", ") + ", the change fails its checks: " + strings.Join(rep.Evidence(), " | ")
			return a.keepPending(ctx, row, errors.New(msg), "approve: "+msg+"; nothing was applied and the change stays pending (approve again once it passes, or reject)")
		}
		if rep != nil {
			a.st.Report = rep
			note += " and verified again"
		}
	}
	w := a.event(&event.Warning{Message: note})
	w.Step = row.Totals.Steps
	if err := a.h.opts.Store.AppendEvents(ctx, w); err != nil {
		return nil, err
	}
	a.emit(w)
	a.cs = ncs
	return nil, nil
}

// keepPending records why an approval applied nothing and returns the
// run as it stays, its change pending, with err.
func (a *agentRun) keepPending(ctx context.Context, row *trace.RunRow, err error, why string) (*Result, error) {
	w := a.event(&event.Warning{Message: why})
	w.Step = row.Totals.Steps
	if err := a.h.opts.Store.AppendEvents(ctx, w); err != nil {
		return nil, err
	}
	a.emit(w)
	res := a.h.storedResult(row)
	res.Err = err
	res.Changes = a.cs
	return res, nil
}

// deferApprover answers everything with Defer: the default when no
// approver is configured.
type deferApprover struct{}

func (deferApprover) ApproveAct(context.Context, *ActRequest) (Decision, error) {
	return Decision{Answer: Defer}, nil
}

func (deferApprover) ApproveChange(context.Context, *Proposal) (Decision, error) {
	return Decision{Answer: Defer}, nil
}

func changedPaths(cs []workspace.Change) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.Path
	}
	return out
}
