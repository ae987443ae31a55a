package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"

	"github.com/ioh-lsp/ioh-lsp/agent"
	"github.com/ioh-lsp/ioh-lsp/agent/trace"
	"github.com/ioh-lsp/ioh-lsp/internal/wire"
)

// cmdApprove applies the pending change of a run.
func cmdApprove(ctx context.Context, env *cliEnv, args []string) int {
	fs := newFlagSet("approve RUN_ID", env.stderr)
	pos, err := parseFlags(fs, args)
	if err == nil {
		err = wantArgs(pos, 1, 1)
	}
	if err != nil {
		return usageError(env, "approve", err)
	}
	return settle(ctx, env, "approve", func(h *agent.Harness) (*agent.Result, error) { return h.Approve(ctx, pos[0]) })
}

// cmdReject drops the pending change of a run.
func cmdReject(ctx context.Context, env *cliEnv, args []string) int {
	fs := newFlagSet("reject RUN_ID", env.stderr)
	reason := fs.String("reason", "", "why (recorded in the trace)")
	pos, err := parseFlags(fs, args)
	if err == nil {
		err = wantArgs(pos, 1, 1)
	}
	if err != nil {
		return usageError(env, "reject", err)
	}
	return settle(ctx, env, "reject", func(h *agent.Harness) (*agent.Result, error) { return h.Reject(ctx, pos[0], *reason) })
}

func settle(ctx context.Context, env *cliEnv, name string, f func(*agent.Harness) (*agent.Result, error)) int {
	cwd, _ := os.Getwd()
	eng, err := wire.NewHarness(ctx, wire.Options{Root: wire.FindRoot(cwd, cwd), Getenv: env.getenv, Logger: cliLogger(env.stderr)})
	if err != nil {
		fmt.Fprintf(env.stderr, "ioh-lsp %s: %v\n", name, err)
		return exitFailed
	}
	defer eng.Close()
	res, err := f(eng.Harness)
	if err != nil {
		fmt.Fprintf(env.stderr, "ioh-lsp %s: %v\n", name, err)
		if errors.Is(err, trace.ErrNotFound) || errors.Is(err, agent.ErrNotPending) {
			return exitUsage
		}
		return exitFailed
	}
	msg := fmt.Sprintf("%s: %s", res.RunID, res.Outcome)
	if res.Err != nil && res.Outcome != agent.OutcomeApplied {
		msg += " (" + res.Err.Error() + ")"
	}
	fmt.Fprintln(env.stderr, msg)
	if res.Outcome == agent.OutcomeApplied || (name == "reject" && res.Outcome == agent.OutcomeRejected) {
		return exitOK
	}
	return exitFailed
}

// lineReader reads answers from the terminal, one line at a time, and
// returns io.EOF once input ends.
type lineReader struct {
	mu sync.Mutex
	r  *bufio.Reader
}

func newLineReader(r io.Reader) *lineReader { return &lineReader{r: bufio.NewReader(r)} }

func (l *lineReader) line() (string, error) {
	s, err := l.r.ReadString('\n')
	if err != nil && s == "" {
		return "", err
	}
	return strings.TrimSpace(strings.ToLower(s)), nil
}

// terminalApprover asks on the terminal (`run --approve ask`): each
// Ask-tier act, then the final change with its diff. End of input defers
// (the run stops as awaiting_approval and can be resumed).
type terminalApprover struct {
	in  *lineReader
	out io.Writer
}

func (t *terminalApprover) ApproveAct(ctx context.Context, r *agent.ActRequest) (agent.Decision, error) {
	t.in.mu.Lock()
	defer t.in.mu.Unlock()
	v := r.Verdict
	rule := "no rule (the act's default)"
	if v.Rule != nil {
		rule = fmt.Sprintf("%s %s %q in layer %s", v.Rule.Effect, v.Rule.Act, v.Rule.Pattern, v.Layer)
	}
	for {
		fmt.Fprintf(t.out, "\n%s step %d wants to %s %s (%s; %s)\nallow [o]nce, for this [r]un, [d]eny, or decide [l]ater? ", r.Run, r.Step, v.Act, v.Target, r.Tool, rule)
		s, err := t.in.line()
		if err != nil {
			return agent.Decision{Answer: agent.Defer, Reason: "no answer on the terminal"}, nil
		}
		switch s {
		case "o", "once", "y", "yes":
			return agent.Decision{Answer: agent.AllowOnce}, nil
		case "r", "run":
			return agent.Decision{Answer: agent.AllowRun}, nil
		case "d", "deny", "n", "no":
			fmt.Fprint(t.out, "reason for the agent (optional): ")
			reason, _ := t.in.line()
			return agent.Decision{Answer: agent.Deny, Reason: reason}, nil
		case "l", "later":
			return agent.Decision{Answer: agent.Defer}, nil
		}
	}
}

func (t *terminalApprover) ApproveChange(ctx context.Context, p *agent.Proposal) (agent.Decision, error) {
	t.in.mu.Lock()
	defer t.in.mu.Unlock()
	state := "UNVERIFIED (the contract has no checks)"
	if p.Verified {
		state = "verified"
	}
	fmt.Fprintf(t.out, "\n%s finished (%s): %s\n\n%s\n", p.Run, state, p.Summary, p.Changes.Diff())
	for {
		fmt.Fprint(t.out, "apply this change? [y]es, [n]o, decide [l]ater: ")
		s, err := t.in.line()
		if err != nil {
			return agent.Decision{Answer: agent.Defer}, nil
		}
		switch s {
		case "y", "yes":
			return agent.Decision{Answer: agent.AllowOnce}, nil
		case "n", "no":
			return agent.Decision{Answer: agent.Deny, Reason: "rejected on the terminal"}, nil
		case "l", "later":
			return agent.Decision{Answer: agent.Defer}, nil
		}
	}
}

// autoApprover (`--approve auto`) applies a verified change; an
// unverified one stays pending. Nobody is there to ask about acts, so an
// Ask-tier act is refused with a reason the model sees.
type autoApprover struct{}

func (autoApprover) ApproveAct(context.Context, *agent.ActRequest) (agent.Decision, error) {
	return agent.Decision{Answer: agent.Deny, Reason: "running unattended (--approve auto): acts that need approval are refused; allow them in the policy"}, nil
}

func (autoApprover) ApproveChange(_ context.Context, p *agent.Proposal) (agent.Decision, error) {
	if p.Verified {
		return agent.Decision{Answer: agent.AllowOnce}, nil
	}
	return agent.Decision{Answer: agent.Defer, Reason: "unverified changes are not applied automatically"}, nil
}

// neverApprover (`--approve never`) leaves the change pending; Ask-tier
// acts are deferred, so resume can answer them.
type neverApprover struct{}

func (neverApprover) ApproveAct(context.Context, *agent.ActRequest) (agent.Decision, error) {
	return agent.Decision{Answer: agent.Defer}, nil
}

func (neverApprover) ApproveChange(context.Context, *agent.Proposal) (agent.Decision, error) {
	return agent.Decision{Answer: agent.Defer}, nil
}
