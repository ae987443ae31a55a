package main

import (
	"context"
	"fmt"
	"os"

	"github.com/ioh-lsp/ioh-lsp/agent"
	"github.com/ioh-lsp/ioh-lsp/internal/wire"
)

// cmdDiff prints a run's change as a unified diff `git apply` takes
// (git headers, a/ and b/ paths, new and deleted file modes), against the
// workspace as it is now: for a pending change, what approving it would
// write.
func cmdDiff(ctx context.Context, env *cliEnv, args []string) int {
	env, _ = guardOutput(env)
	fs := newFlagSet("diff RUN_ID", env.stderr)
	arg, err := parseRunID(fs, args)
	if err != nil {
		return usageError(env, "diff", err)
	}
	id, err := resolveRun(ctx, env, arg)
	if err != nil {
		fmt.Fprintf(env.stderr, "ioh-lsp diff: %v\n", err)
		return runErrorExit(err)
	}
	cwd, _ := os.Getwd()
	eng, err := wire.NewHarness(ctx, wire.Options{Root: wire.FindRoot(cwd, cwd), Getenv: env.getenv, Logger: cliLogger(env.stderr)})
	if err != nil {
		fmt.Fprintf(env.stderr, "ioh-lsp diff: %v\n", err)
		return errorExit(err, exitFailed)
	}
	defer eng.Close()
	row, err := eng.Store.Run(ctx, id)
	if err != nil {
		fmt.Fprintf(env.stderr, "ioh-lsp diff: %v\n", err)
		return errorExit(err, exitFailed)
	}
	if len(row.Changes) == 0 {
		fmt.Fprintf(env.stderr, "ioh-lsp diff: run %s changed no file\n", id)
		return exitOK
	}
	cs, err := eng.Harness.ChangesOf(row.Changes)
	if err != nil {
		fmt.Fprintf(env.stderr, "ioh-lsp diff: run %s: %v\n", id, err)
		return exitFailed
	}
	n := 0
	for _, ch := range cs.Changes() {
		if d := cs.DiffFile(ch.Path); d != "" {
			fmt.Fprint(env.stdout, d)
			n++
		}
	}
	if n == 0 && row.Outcome == string(agent.OutcomeApplied) {
		fmt.Fprintf(env.stderr, "ioh-lsp diff: run %s's change is applied: the workspace holds it (git diff shows it)\n", id)
	}
	return exitOK
}
