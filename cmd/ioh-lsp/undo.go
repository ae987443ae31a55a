package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/ioh-lsp/ioh-lsp/internal/agent"
	"github.com/ioh-lsp/ioh-lsp/internal/wire"
)

// cmdUndo reverts the applied change of a run: each file it changed goes
// back to what it was, edits made since kept unless they overlap the
// change (then nothing is written and the overlapping lines are named).
func cmdUndo(ctx context.Context, env *cliEnv, args []string) int {
	env, _ = guardOutput(env)
	fs := newFlagSet("undo RUN_ID", env.stderr)
	last := addLast(fs)
	pos, err := parseFlags(fs, args)
	var arg string
	if err == nil {
		arg, err = runArg(pos, *last)
	}
	if err != nil {
		return usageError(env, "undo", err)
	}
	id, err := resolveRun(ctx, env, arg)
	if err != nil {
		fmt.Fprintf(env.stderr, "ioh-lsp undo: %v\n", err)
		return runErrorExit(err)
	}
	cwd, _ := os.Getwd()
	eng, err := wire.NewHarness(ctx, wire.Options{Root: wire.FindRoot(cwd, cwd), Getenv: env.getenv, Logger: cliLogger(env.stderr)})
	if err != nil {
		fmt.Fprintf(env.stderr, "ioh-lsp undo: %v\n", err)
		return errorExit(err, exitFailed)
	}
	defer eng.Close()
	res, err := eng.Harness.Undo(ctx, id)
	var conflict *agent.UndoConflictError
	switch {
	case errors.As(err, &conflict):
		fmt.Fprintf(env.stderr, "ioh-lsp undo: %v\nnothing was written: put those lines back as the change left them (or revert them by hand), then run ioh-lsp undo %s again\n", err, id)
		return exitFailed
	case errors.Is(err, agent.ErrNotApplied):
		fmt.Fprintf(env.stderr, "ioh-lsp undo: %v: only an applied change can be undone (a pending one is dropped with ioh-lsp reject %s)\n", err, id)
		return exitUsage
	case errors.Is(err, agent.ErrUndone):
		fmt.Fprintf(env.stderr, "ioh-lsp undo: %v\n", err)
		return exitUsage
	case err != nil:
		fmt.Fprintf(env.stderr, "ioh-lsp undo: %v\n", err)
		return errorExit(err, exitFailed)
	}
	msg := fmt.Sprintf("%s: undone: %s put back as before the change", res.RunID, strings.Join(res.Files, ", "))
	if len(res.Merged) > 0 {
		msg += fmt.Sprintf(" (edits made since kept in %s)", strings.Join(res.Merged, ", "))
	}
	fmt.Fprintln(env.stderr, msg)
	return exitOK
}
