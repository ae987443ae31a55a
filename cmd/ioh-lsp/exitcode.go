package main

import (
	"errors"

	"github.com/ioh-lsp/ioh-lsp/internal/agent"
)

// exitStorage: the trace store failed (docs/cli.md#exit-codes-of-run-and-resume).
const exitStorage = 6

// exitCodes is the exit-code table of run, ask and resume as their --help
// and the man page print it; docs/cli.md#exit-codes-of-run-and-resume says
// the same at length (TestHelpBinary holds the two to the same codes).
var exitCodes = []struct {
	code int
	what string
}{
	{exitOK, "verified and applied; a verified change left pending by --approve never; finished unverified (no checks)"},
	{exitFailed, "verification failed, the change was rejected, the run stalled or ended denied"},
	{exitUsage, "usage, contract or configuration error (the message names the flag, file or key)"},
	{exitBudget, "a budget ran out (resume --budget-* continues it)"},
	{exitDeferred, "waiting for an approval: ioh-lsp approve --last (or reject), then resume"},
	{exitProvider, "the provider failed after retries and fallbacks"},
	{exitStorage, "the trace store failed (full disk, I/O error); resume continues an interrupted run"},
	{exitCancelled, "cancelled (Ctrl-C, SIGTERM)"},
}

// errorExit is the exit code of a command that failed with err before or
// instead of a run's outcome, the same for every command that opens the
// trace store (docs/cli.md#exit-codes-of-run-and-resume): a store that
// cannot be opened or written (the state directory is a file, read-only
// or full) is 6, as when it stops a run; an unknown run, a run another
// process drives, a state directory that is not configured usably or a
// configuration error is 2; anything else is otherwise.
func errorExit(err error, otherwise int) int {
	switch {
	case errors.Is(err, agent.ErrStorage):
		return exitStorage
	case errors.Is(err, agent.ErrNotFound), errors.Is(err, agent.ErrLeased), errors.Is(err, agent.ErrStateDir), errors.Is(err, agent.ErrConfig):
		return exitUsage
	}
	return otherwise
}
