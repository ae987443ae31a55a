package main

import "github.com/ioh-lsp/ioh-lsp/internal/sandbox"

// maybeSandboxInit runs the sandbox's re-executed stages (PID 1 of a Linux
// sandbox, its exec stage, the floor's rlimit stage) when this process was
// started as one; it then never returns. Otherwise it reports false at
// once, before main does anything else.
func maybeSandboxInit() bool { return sandbox.Init() }
