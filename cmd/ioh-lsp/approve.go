package main

import (
	"context"
	"fmt"
)

// cmdApprove is not built yet; its owner replaces this file.
func cmdApprove(_ context.Context, env *cliEnv, _ []string) int {
	fmt.Fprintln(env.stderr, "ioh-lsp: this command is not built yet")
	return exitUsage
}

// cmdReject is not built yet; its owner replaces this file.
func cmdReject(_ context.Context, env *cliEnv, _ []string) int {
	fmt.Fprintln(env.stderr, "ioh-lsp: this command is not built yet")
	return exitUsage
}
