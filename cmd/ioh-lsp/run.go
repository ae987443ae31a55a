package main

import (
	"context"
	"fmt"
)

// cmdRun is not built yet; its owner replaces this file.
func cmdRun(_ context.Context, env *cliEnv, _ []string) int {
	fmt.Fprintln(env.stderr, "ioh-lsp: this command is not built yet")
	return exitUsage
}

// cmdResume is not built yet; its owner replaces this file.
func cmdResume(_ context.Context, env *cliEnv, _ []string) int {
	fmt.Fprintln(env.stderr, "ioh-lsp: this command is not built yet")
	return exitUsage
}
