package main

import (
	"context"
	"errors"
	"fmt"
	"os"

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
