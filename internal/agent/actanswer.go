package agent

import (
	"context"
	"errors"
	"fmt"

	"github.com/ioh-lsp/ioh-lsp/internal/agent/event"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/policy"
)

// A run stopped at an Ask-tier act (awaiting_approval, an approver
// deferred) can be answered from anywhere: `ioh-lsp approve RUN
// [--for-run]`, `ioh-lsp reject RUN [--reason R]`, or the editor's
// ioh.approve / ioh.reject record the answer with the run; Resume then
// continues the interrupted turn and takes that answer for the act
// instead of asking the approver.

// deferredAct is the act a run waits on.
type deferredAct struct {
	Tool   string `json:"tool"`
	Act    string `json:"act"`
	Target string `json:"target"`
}

// ErrNoDeferredAct: the run does not wait on an act.
var ErrNoDeferredAct = errors.New("run does not wait for approval of an act")

// Waiting describes what a stored run waits on: "change" (its change
// awaits approval: Approve or Reject settle it), "act" (an Ask-tier act:
// AnswerAct records the answer, Resume continues), or "" (nothing).
func (h *Harness) Waiting(ctx context.Context, id string) (string, error) {
	row, err := h.opts.Store.Run(ctx, id)
	if err != nil {
		return "", err
	}
	st, err := decodeState(row.State)
	if err != nil {
		return "", err
	}
	return waitingOn(Outcome(row.Outcome), st), nil
}

func waitingOn(o Outcome, st *runState) string {
	switch {
	case o != OutcomeAwaitingApproval:
		return ""
	case st.Phase == phaseProposal:
		return "change"
	case st.Pending != nil:
		return "act"
	}
	return ""
}

// AnswerAct records the answer to the Ask-tier act run id waits on:
// AllowOnce, AllowRun (for the rest of the run) or Deny with a reason
// the model sees. The run stays awaiting_approval until Resume continues
// it with that answer; a second answer before then replaces the first.
func (h *Harness) AnswerAct(ctx context.Context, id string, d Decision) (*Result, error) {
	switch d.Answer {
	case AllowOnce, AllowRun, Deny:
	default:
		return nil, fmt.Errorf("answer %s: %q is not an answer to an act (allow_once, allow_run or deny)", id, d.Answer)
	}
	row, err := h.opts.Store.Run(ctx, id)
	if err != nil {
		return nil, err
	}
	if row.Parent != "" {
		return nil, fmt.Errorf("%s is a sub-agent: answer its root run %s: %w", id, row.Root, ErrNoDeferredAct)
	}
	st, err := decodeState(row.State)
	if err != nil {
		return nil, err
	}
	if waitingOn(Outcome(row.Outcome), st) != "act" {
		return nil, fmt.Errorf("%s (outcome %s): %w", id, row.Outcome, ErrNoDeferredAct)
	}
	if err := h.opts.Store.Acquire(ctx, id, h.opts.Owner, h.opts.LeaseTTL); err != nil {
		return nil, err
	}
	defer h.opts.Store.Release(context.WithoutCancel(ctx), id, h.opts.Owner)
	if d.Answer == Deny && d.Reason == "" {
		d.Reason = "no reason given" // the model reads "denied by the user: ACT TARGET: no reason given"
	}
	st.Answer = &d
	f := &event.Approval{Answer: string(d.Answer), Reason: d.Reason, Recorded: true}
	if st.Deferred != nil {
		f.Tool, f.Act, f.Target = st.Deferred.Tool, st.Deferred.Act, st.Deferred.Target
	}
	a := &agentRun{h: h, id: id, rootID: row.Root, st: st, totals: row.Totals, sink: h.opts.Events}
	ev := a.event(f)
	ev.Step = row.Totals.Steps
	if err := h.opts.Store.SetOutcome(ctx, id, row.Outcome, row.Summary, row.Error, st.encode(), ev); err != nil {
		return nil, fmt.Errorf("record the answer of %s: %w", id, err)
	}
	a.emit(ev)
	res := h.storedResult(row)
	return res, nil
}

// takeAnswer returns the answer recorded for the act tool wants (v), once:
// it matches the deferred act, or any act when the deferral predates
// recording which act it was.
func (a *agentRun) takeAnswer(tool string, v policy.Verdict) (Decision, bool) {
	ans, def := a.st.Answer, a.st.Deferred
	if ans == nil {
		return Decision{}, false
	}
	if def != nil && (def.Tool != tool || def.Act != string(v.Act) || def.Target != v.Target) {
		return Decision{}, false
	}
	a.st.Answer, a.st.Deferred = nil, nil
	return *ans, true
}

// RecordApplied records run id's pending change (awaiting approval of its
// change) as applied by its approver itself, the editor's
// workspace/applyEdit after the change was left pending: the harness
// writes nothing.
func (h *Harness) RecordApplied(ctx context.Context, id string) (*Result, error) {
	return h.settle(ctx, id, func(*agentRun) end { return end{outcome: OutcomeApplied} }, "applied in the editor")
}
