package main

import (
	"context"
	"fmt"
)

// cmdDemo is not built yet; its owner replaces this file.
func cmdDemo(_ context.Context, env *cliEnv, _ []string) int {
	fmt.Fprintln(env.stderr, "ioh-lsp: this command is not built yet")
	return exitUsage
}
