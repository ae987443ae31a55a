package main

import (
	"context"
	"fmt"
)

// cmdGrep is not built yet; its owner replaces this file.
func cmdGrep(_ context.Context, env *cliEnv, _ []string) int {
	fmt.Fprintln(env.stderr, "ioh-lsp: this command is not built yet")
	return exitUsage
}

// cmdFind is not built yet; its owner replaces this file.
func cmdFind(_ context.Context, env *cliEnv, _ []string) int {
	fmt.Fprintln(env.stderr, "ioh-lsp: this command is not built yet")
	return exitUsage
}
