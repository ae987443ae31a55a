package main

import (
	"context"
	"fmt"
)

// cmdRuns is not built yet; its owner replaces this file.
func cmdRuns(_ context.Context, env *cliEnv, _ []string) int {
	fmt.Fprintln(env.stderr, "ioh-lsp: this command is not built yet")
	return exitUsage
}

// cmdTrace is not built yet; its owner replaces this file.
func cmdTrace(_ context.Context, env *cliEnv, _ []string) int {
	fmt.Fprintln(env.stderr, "ioh-lsp: this command is not built yet")
	return exitUsage
}
