package agent

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/ioh-lsp/ioh-lsp/agent/tools"
	"github.com/ioh-lsp/ioh-lsp/agent/trace"
	"github.com/ioh-lsp/ioh-lsp/agent/verify"
)

// maxVerifyFeedback: a failed verification goes back to the model as the
// finish call's result this many times, while the budget lasts; the next
// failure ends the run as verification_failed. Red/green dishonesty (a
// check that passes before the change) cannot be fixed by editing, so it
// ends the run at once.
const maxVerifyFeedback = 2

// redCache keeps a run's red-phase check runs for its later finish calls.
type redCache = verify.RedCache

// proposeNext marks a finish that leads to the proposal.
var proposeNext = &end{}

// finish handles the finish call: sub-agents end unverified (their parent
// verifies the merged change); a root run verifies the change set.
func (a *agentRun) finish(ctx context.Context, sc *stepCtx, summary string) (tools.Result, *end, error) {
	a.st.Summary = summary
	if a.parent != "" {
		return tools.Result{Content: "finished"}, &end{outcome: OutcomeUnverified}, nil
	}
	if a.cs.Len() == 0 && a.st.Denied {
		return tools.Result{Content: "finished with no change"}, &end{OutcomeDenied, errors.New("finished without a change after acts were denied")}, nil
	}
	if len(a.c.Verify.Checks) == 0 {
		a.st.Phase = phaseProposal
		return tools.Result{Content: "finished; the contract has no checks, so the change is unverified"}, proposeNext, nil
	}
	rep, err := a.h.opts.Verify(ctx, verify.Options{
		Sandbox: a.h.opts.Sandbox, Root: a.h.opts.Root.Dir(), Changes: a.cs.Changes(), Verify: a.c.Verify,
		ContractPath: a.contractRel(), Red: &a.red,
		OnCheck: func(c verify.CheckResult) {
			f := map[string]any{"check": c.Name, "phase": c.Phase, "passed": c.Passed,
				"exit_code": c.ExitCode, "duration_ms": c.Duration.Milliseconds(), "locations": c.Locations, "backend": c.Backend}
			addEvidence(f, c)
			sc.add(a.event(trace.EventVerification, f))
		},
	})
	if err != nil {
		if ctx.Err() != nil {
			return tools.Result{}, nil, ctx.Err()
		}
		return tools.Errorf("verification could not run: %v", err), &end{OutcomeVerificationFailed, fmt.Errorf("verify: %w", err)}, nil
	}
	a.st.Report = rep
	sc.add(a.event(trace.EventVerification, verificationFields(rep)))
	switch {
	case rep.Passed && rep.Proves:
		a.st.Phase = phaseProposal
		msg := fmt.Sprintf("verified: all %d checks passed", len(a.c.Verify.Checks))
		if rep.NeedsHuman() {
			msg += "; the change touches its own checks, so it waits for a human review: " + strings.Join(rep.TouchesChecks, "; ")
		}
		return tools.Result{Content: msg}, proposeNext, nil
	case rep.Passed:
		return tools.Errorf("the checks pass, but they already passed before the change (red/green), so they prove nothing"),
			&end{OutcomeVerificationFailed, errors.New("red/green: a check passes on the unchanged tree")}, nil
	}
	a.st.Verifications++
	msg := "verification failed:\n" + failureText(rep)
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
	pf := map[string]any{"files": changedPaths(a.cs.Changes()), "verified": p.Verified, "summary": a.st.Summary}
	if r := a.st.Report; r != nil {
		pf["evidence"] = r.Evidence()
		if r.NeedsHuman() {
			pf["touches_checks"] = r.TouchesChecks
		}
	}
	ev := a.event(trace.EventProposal, pf)
	ev.Step = a.totals.Steps
	a.emit(ev)
	d, err := a.h.opts.Approver.ApproveChange(ctx, p)
	if err != nil {
		if ctx.Err() != nil {
			return end{OutcomeCancelled, ctx.Err()}
		}
		d = Decision{Answer: Defer, Reason: "the approver failed: " + err.Error()}
	}
	ap := a.event(trace.EventApproval, map[string]any{"change": true, "answer": string(d.Answer), "reason": d.Reason})
	ap.Step = a.totals.Steps
	a.emit(ap)
	events := []trace.Event{ev, ap}
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
	if err := a.cs.Apply(); err != nil {
		return end{OutcomeRejected, fmt.Errorf("apply change: %w", err)}
	}
	return end{outcome: OutcomeApplied}
}

func orNone(s string) string {
	if s == "" {
		return "no reason given"
	}
	return s
}

func verificationFields(rep *verify.Report) map[string]any {
	checks := make([]map[string]any, 0, len(rep.Checks))
	for _, c := range rep.Checks {
		f := map[string]any{"name": c.Name, "phase": c.Phase, "passed": c.Passed, "exit_code": c.ExitCode,
			"duration_ms": c.Duration.Milliseconds(), "locations": len(c.Locations), "backend": c.Backend}
		addEvidence(f, c)
		if c.Downgrade != "" {
			f["downgrade"] = c.Downgrade // the tier is a downgrade: say why
		}
		checks = append(checks, f)
	}
	f := map[string]any{"passed": rep.Passed, "proves": rep.Proves, "checks": checks, "warnings": rep.Warnings}
	if rep.NeedsHuman() {
		f["touches_checks"] = rep.TouchesChecks
	}
	return f
}

// addEvidence adds a check run's evidence to its trace fields: where the
// verdict comes from ("exit code only" said out loud), the per-test
// summary, the tests it fixed and the problems that failed it.
func addEvidence(f map[string]any, c verify.CheckResult) {
	f["evidence"] = c.Evidence
	if c.Tests != nil {
		f["tests"] = c.Tests
	}
	if len(c.Fixed) > 0 {
		f["fixed"] = c.Fixed
	}
	if len(c.Problems) > 0 {
		f["problems"] = c.Problems
	}
}

func failureText(rep *verify.Report) string {
	var b strings.Builder
	for _, c := range rep.Checks {
		if c.Passed || c.Phase == "red" {
			continue
		}
		fmt.Fprintf(&b, "check %q failed (exit %d%s)\n", c.Name, c.ExitCode, capNote(c))
		for _, p := range c.Problems {
			fmt.Fprintf(&b, "  %s\n", p)
		}
		for _, l := range c.Locations {
			fmt.Fprintf(&b, "  %s:%d:%d: %s\n", l.Path, l.Line, l.Col, l.Message)
		}
		out := c.Output
		if len(out) > 4000 {
			out = "…" + out[len(out)-4000:]
		}
		b.WriteString(out)
		b.WriteString("\n")
	}
	for _, w := range rep.Warnings {
		fmt.Fprintf(&b, "warning: %s\n", w)
	}
	return b.String()
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
