package main

import (
	"context"
	"fmt"
)

// cmdSandbox is not built yet; its owner replaces this file.
func cmdSandbox(_ context.Context, env *cliEnv, _ []string) int {
	fmt.Fprintln(env.stderr, "ioh-lsp: this command is not built yet")
	return exitUsage
}
