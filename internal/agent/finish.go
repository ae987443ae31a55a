package agent

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/ioh-lsp/ioh-lsp/internal/agent/event"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/tools"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/verify"
)

// maxVerifyFeedback: a failed verification goes back to the model as the
// finish call's result this many times, while the budget lasts; the next
// failure ends the run as verification_failed. Red/green dishonesty (a
// check that passes before the change) cannot be fixed by editing, so it
// ends the run at once.
const maxVerifyFeedback = 2

// redCache keeps a run's red-phase check runs for its later finish
// calls, and the summary of them the first message shows (redphase.go).
type redCache struct {
	verify.RedCache
	summary string
}

// proposeNext marks a finish that leads to the proposal.
var proposeNext = &end{}

// finish handles the finish call: sub-agents end unverified (their parent
// verifies the merged change); a root run verifies the change set.
func (a *agentRun) finish(ctx context.Context, sc *stepCtx, summary string) (tools.Result, *end, error) {
	a.st.Summary = summary
	if a.parent != "" {
		return tools.Result{Content: "finished"}, &end{outcome: OutcomeUnverified}, nil
	}
	if r, ok := a.reviewChange(); ok { // diffreview.go: the diff once, before the checks
		return r, nil, nil
	}
	if a.cs.Len() == 0 && a.st.Denied {
		return tools.Result{Content: "finished with no change"}, &end{OutcomeDenied, errors.New("finished without a change after acts were denied")}, nil
	}
	if len(a.c.Verify.Checks) == 0 {
		a.st.Phase = phaseProposal
		return tools.Result{Content: "finished; the contract has no checks, so the change is unverified"}, proposeNext, nil
	}
	rep, err := a.h.opts.Verify(ctx, verify.Options{
		Sandbox: a.sandboxFor("check"), Root: a.h.opts.Root.Dir(), Changes: a.cs.Changes(), Verify: a.c.Verify,
		ContractPath: a.contractRel(), Red: &a.red.RedCache, Withheld: a.withheld(), OnCheckStart: a.checkStarted,
		OnCheck: func(c verify.CheckResult) {
			sc.add(a.event(checkRunEvent(c)))
		},
	})
	if err != nil {
		if ctx.Err() != nil {
			return tools.Result{}, nil, ctx.Err()
		}
		return tools.Errorf("verification could not run: %v", err), &end{OutcomeVerificationFailed, fmt.Errorf("verify: %w", err)}, nil
	}
	a.st.Report = rep
	sc.add(a.event(verdictOf(rep)))
	switch {
	case rep.Passed && rep.Proves:
		a.st.Phase = phaseProposal
		msg := fmt.Sprintf("verified: all %d checks passed", len(a.c.Verify.Checks))
		for _, c := range rep.Checks {
			if len(c.Flaky) > 0 {
				msg += fmt.Sprintf("; check %s: %s failed, then passed on rerun: flaky", c.Name, strings.Join(c.Flaky, ", "))
			}
		}
		if rep.NeedsHuman() {
			msg += "; the change touches its own checks, so it waits for a human review: " + strings.Join(rep.TouchesChecks, "; ")
		}
		return tools.Result{Content: msg}, proposeNext, nil
	case rep.Passed:
		return tools.Errorf("the checks pass, but they already passed before the change (red/green), so they prove nothing"),
			&end{OutcomeVerificationFailed, errors.New("red/green: a check passes on the unchanged tree")}, nil
	}
	a.st.Verifications++
	msg := "verification failed:\n" + failureText(rep, a.c.Verify)
	if a.st.Verifications > maxVerifyFeedback {
		return tools.Errorf("%s", msg), &end{OutcomeVerificationFailed, errors.New("verification failed")}, nil
	}
	return tools.Errorf("%s\nFix the change and call finish again.", msg), nil, nil
}

// propose offers a finished change to the approver.
func (a *agentRun) propose(ctx context.Context) end {
	base := OutcomeUnverified
	if a.st.Report != nil && a.st.Report.Passed {
		base = OutcomeVerified
	}
	if a.cs.Len() == 0 {
		return end{outcome: base}
	}
	p := &Proposal{Run: a.id, Goal: a.c.Goal, Summary: a.st.Summary, Changes: a.cs, Report: a.st.Report, Verified: base == OutcomeVerified}
	pf := &event.Proposal{Files: changedPaths(a.cs.Changes()), Verified: p.Verified, Summary: a.st.Summary}
	if r := a.st.Report; r != nil {
		pf.Evidence = r.Evidence()
		if r.NeedsHuman() {
			pf.TouchesChecks = r.TouchesChecks
		}
	}
	ev := a.event(pf)
	ev.Step = a.totals.Steps
	a.emit(ev)
	d, err := a.h.opts.Approver.ApproveChange(ctx, p)
	if err != nil {
		if ctx.Err() != nil {
			return end{OutcomeCancelled, ctx.Err()}
		}
		d = Decision{Answer: Defer, Reason: "the approver failed: " + err.Error()}
	}
	ap := a.event(&event.Approval{Change: true, Answer: string(d.Answer), Reason: d.Reason})
	ap.Step = a.totals.Steps
	a.emit(ap)
	events := []event.Event{ev, ap}
	var out end
	switch d.Answer {
	case Applied:
		out = end{outcome: OutcomeApplied}
	case AllowOnce, AllowRun:
		out = a.apply()
	case Deny:
		out = end{OutcomeRejected, fmt.Errorf("change rejected: %s", orNone(d.Reason))}
	default:
		out = end{OutcomeAwaitingApproval, errors.New("the change awaits approval")}
		// With its bases, so approve can merge it onto later edits.
		a.keepUndo(a.undoSnapshot())
	}
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if err := a.h.opts.Store.AppendEvents(cctx, events...); err != nil {
		a.h.log.Warn("store proposal events", "run", a.id, "err", err)
	}
	return out
}

// apply writes the change set to the workspace; conflicts (files changed
// under the proposal) refuse it as a whole.
func (a *agentRun) apply() end {
	snap := a.undoSnapshot()
	if err := a.cs.Apply(); err != nil {
		return end{OutcomeRejected, fmt.Errorf("apply change: %w", err)}
	}
	a.keepUndo(snap)
	return end{outcome: OutcomeApplied}
}

func orNone(s string) string {
	if s == "" {
		return "no reason given"
	}
	return s
}

// verdictOf is the verification event of a report: every check run
// and the verdict.
func verdictOf(rep *verify.Report) *event.Verdict {
	checks := make([]event.CheckSummary, 0, len(rep.Checks))
	for _, c := range rep.Checks {
		e := evidenceOf(c)
		checks = append(checks, event.CheckSummary{Name: c.Name, Phase: c.Phase, Passed: c.Passed, ExitCode: c.ExitCode,
			DurationMS: c.Duration.Milliseconds(), Locations: len(c.Locations), Backend: c.Backend, Downgrade: c.Downgrade,
			Evidence: e.Evidence, Tests: e.Tests, Fixed: e.Fixed, Problems: e.Problems, Flaky: e.Flaky, Preflight: e.Preflight})
	}
	v := &event.Verdict{Passed: rep.Passed, Proves: rep.Proves, Checks: checks, Warnings: rep.Warnings}
	if rep.NeedsHuman() {
		v.TouchesChecks = rep.TouchesChecks
	}
	return v
}

// checkRunEvent is the verification event of one check run.
func checkRunEvent(c verify.CheckResult) *event.CheckRun {
	var locs []event.Location
	if c.Locations != nil {
		locs = make([]event.Location, 0, len(c.Locations)) // [] stays [], as the report has it
	}
	for _, l := range c.Locations {
		locs = append(locs, event.Location{Path: l.Path, Line: l.Line, Col: l.Col, Message: l.Message, Test: l.Test})
	}
	return &event.CheckRun{Check: c.Name, Phase: c.Phase, Passed: c.Passed, ExitCode: c.ExitCode,
		DurationMS: c.Duration.Milliseconds(), Locations: locs, Backend: c.Backend, CheckEvidence: evidenceOf(c)}
}

// evidenceOf is a check run's evidence in its trace event: where the
// verdict comes from ("exit code only" said out loud), the per-test
// summary, the tests it fixed and the problems that failed it.
func evidenceOf(c verify.CheckResult) event.CheckEvidence {
	e := event.CheckEvidence{Evidence: c.Evidence, Fixed: c.Fixed, Problems: c.Problems, Flaky: c.Flaky, Preflight: c.Preflight}
	if t := c.Tests; t != nil {
		e.Tests = &event.TestSummary{Ran: t.Ran, Passed: t.Passed, Skipped: t.Skipped, Failed: t.Failed, FailedMore: t.FailedMore}
	}
	return e
}

func capNote(c verify.CheckResult) string {
	switch {
	case c.CapHit != "":
		return ", " + c.CapHit + " limit hit"
	case c.Signal != "":
		return ", signal " + c.Signal
	}
	return ""
}
