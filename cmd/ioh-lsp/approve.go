package main

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/ioh-lsp/ioh-lsp/internal/agent"
	"github.com/ioh-lsp/ioh-lsp/internal/wire"
)

// cmdApprove answers what a run waits on with yes: a pending change is
// applied; a deferred Ask-tier act is allowed once (--for-run: for the
// rest of the run), and `resume` continues with that answer.
func cmdApprove(ctx context.Context, env *cliEnv, args []string) int {
	env, _ = guardOutput(env)
	fs := newFlagSet("approve RUN_ID", env.stderr)
	forRun := fs.Bool("for-run", false, "a deferred act: allow it for the rest of the run, not only once")
	arg, err := parseRunID(fs, args)
	if err != nil {
		return usageError(env, "approve", err)
	}
	act := agent.Decision{Answer: agent.AllowOnce}
	if *forRun {
		act.Answer = agent.AllowRun
	}
	return settle(ctx, env, "approve", arg, act, *forRun, func(h *agent.Harness, id string) (*agent.Result, error) { return h.Approve(ctx, id) })
}

// cmdReject answers what a run waits on with no: a pending change is
// dropped; a deferred Ask-tier act is denied with the reason (the model
// sees it when `resume` continues the run). With --feedback (or
// --continue) the run goes on at once: a pending change is kept for the
// model to revise, with the feedback as the user's next message (a
// deferred act is denied with the feedback as the reason); the run's
// flags (--approve, --json, …) apply as for resume.
func cmdReject(ctx context.Context, env *cliEnv, args []string) int {
	env, g := guardOutput(env)
	fs := newFlagSet("reject RUN_ID", env.stderr)
	reason := fs.String("reason", "", "why, `R` (recorded in the trace; for an act, shown to the agent)")
	var feedback string
	fs.StringVar(&feedback, "feedback", "", "continue the run: the agent revises its change as `TEXT` asks (the change is kept, not dropped)")
	fs.StringVar(&feedback, "continue", "", "the same as --feedback `TEXT`")
	f := new(runFlags)
	f.register(fs)
	arg, err := parseRunID(fs, args)
	if err == nil {
		err = f.check()
	}
	if err != nil {
		return usageError(env, "reject", err)
	}
	if feedback != "" {
		return rejectContinuing(ctx, env, g, f, arg, feedback)
	}
	act := agent.Decision{Answer: agent.Deny, Reason: *reason}
	return settle(ctx, env, "reject", arg, act, false, func(h *agent.Harness, id string) (*agent.Result, error) { return h.Reject(ctx, id, *reason) })
}

// rejectContinuing rejects what run arg waits on with feedback and drives
// the run on, as resume does.
func rejectContinuing(ctx context.Context, env *cliEnv, g *outGuard, f *runFlags, arg, feedback string) int {
	id, err := resolveRun(ctx, env, arg)
	if err != nil {
		fmt.Fprintf(env.stderr, "ioh-lsp reject: %v\n", err)
		return runErrorExit(err)
	}
	cwd, _ := os.Getwd()
	return drive(ctx, env, g, f, wire.FindRoot(cwd, cwd), func(ctx context.Context, h *agent.Harness) (*agent.Run, error) {
		waiting, err := h.Waiting(ctx, id)
		if err != nil {
			return nil, err
		}
		if waiting == "act" {
			if _, err := h.AnswerAct(ctx, id, agent.Decision{Answer: agent.Deny, Reason: feedback}); err != nil {
				return nil, err
			}
			return h.Resume(ctx, id)
		}
		return h.RejectWithFeedback(ctx, id, feedback)
	})
}

// settle answers run id: a deferred act with act, a pending change with
// change. forRun is only meaningful for an act.
func settle(ctx context.Context, env *cliEnv, name, arg string, act agent.Decision, forRun bool, change func(*agent.Harness, string) (*agent.Result, error)) int {
	id, err := resolveRun(ctx, env, arg)
	if err != nil {
		fmt.Fprintf(env.stderr, "ioh-lsp %s: %v\n", name, err)
		return runErrorExit(err)
	}
	cwd, _ := os.Getwd()
	eng, err := wire.NewHarness(ctx, wire.Options{Root: wire.FindRoot(cwd, cwd), Getenv: env.getenv, Logger: cliLogger(env.stderr)})
	if err != nil {
		fmt.Fprintf(env.stderr, "ioh-lsp %s: %v\n", name, err)
		return errorExit(err, exitFailed)
	}
	defer eng.Close()
	waiting, err := eng.Harness.Waiting(ctx, id)
	if err != nil {
		fmt.Fprintf(env.stderr, "ioh-lsp %s: %v\n", name, err)
		return errorExit(err, exitFailed)
	}
	if waiting == "act" {
		res, err := eng.Harness.AnswerAct(ctx, id, act)
		if err != nil {
			fmt.Fprintf(env.stderr, "ioh-lsp %s: %v\n", name, err)
			if errors.Is(err, agent.ErrNoDeferredAct) {
				return exitUsage
			}
			return errorExit(err, exitFailed)
		}
		what := "allowed once"
		switch act.Answer {
		case agent.AllowRun:
			what = "allowed for the rest of the run"
		case agent.Deny:
			what = "denied"
			if act.Reason != "" {
				what += " (" + act.Reason + ")"
			}
		}
		fmt.Fprintf(env.stderr, "%s: the act it waits on is %s; continue it with: ioh-lsp resume %s\n", res.RunID, what, res.RunID)
		return exitOK
	}
	if forRun {
		fmt.Fprintf(env.stderr, "ioh-lsp %s: --for-run answers a deferred act, and %s does not wait on one\n", name, id)
		return exitUsage
	}
	res, err := change(eng.Harness, id)
	if err != nil {
		fmt.Fprintf(env.stderr, "ioh-lsp %s: %v\n", name, err)
		if errors.Is(err, agent.ErrNotPending) {
			return exitUsage
		}
		return errorExit(err, exitFailed)
	}
	msg := fmt.Sprintf("%s: %s", res.RunID, res.Outcome)
	if res.Err != nil && res.Outcome != agent.OutcomeApplied {
		msg += " (" + res.Err.Error() + ")"
	}
	if res.Pending {
		// A conflict: nothing was applied and the change still waits.
		msg += fmt.Sprintf("\nnothing was applied; the change is still pending: change the lines named above so they no longer overlap the agent's (edits elsewhere are merged) and run ioh-lsp approve %s again, or ioh-lsp reject %s (--feedback TEXT to have the agent revise it)", res.RunID, res.RunID)
		fmt.Fprintln(env.stderr, msg)
		return exitDeferred
	}
	fmt.Fprintln(env.stderr, msg)
	if res.Outcome == agent.OutcomeApplied || (name == "reject" && res.Outcome == agent.OutcomeRejected) {
		return exitOK
	}
	return exitFailed
}
