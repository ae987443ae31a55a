package main

import (
	"errors"

	"github.com/ioh-lsp/ioh-lsp/agent"
	"github.com/ioh-lsp/ioh-lsp/agent/trace"
)

// exitStorage: the trace store failed (docs/cli.md#exit-codes-of-run-and-resume).
const exitStorage = 6

// errorExit is the exit code of a command that failed with err before or
// instead of a run's outcome, the same for every command that opens the
// trace store (docs/cli.md#exit-codes-of-run-and-resume): a store that
// cannot be opened or written (the state directory is a file, read-only
// or full) is 6, as when it stops a run; an unknown run, a run another
// process drives, a state directory that is not configured usably or a
// configuration error is 2; anything else is otherwise.
func errorExit(err error, otherwise int) int {
	switch {
	case errors.Is(err, trace.ErrStorage):
		return exitStorage
	case errors.Is(err, trace.ErrNotFound), errors.Is(err, trace.ErrLeased), errors.Is(err, trace.ErrStateDir), errors.Is(err, agent.ErrConfig):
		return exitUsage
	}
	return otherwise
}
