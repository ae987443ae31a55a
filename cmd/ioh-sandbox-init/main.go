// Command ioh-sandbox-init is the sandbox's small init program: ioh-lsp
// starts it, instead of re-executing its whole self, for each stage of a
// contained run (PID 1 of a Linux sandbox, the exec stage, the landlock
// tier's runner, the spawn stage, the floor tier's stage, and the Go build
// cache server the go command starts inside a landlock or floor run as
// its GOCACHEPROG, internal/sandbox/internal/gocache). `make build` builds it next to
// bin/ioh-lsp, first, and links ioh-lsp with its SHA-256; ioh-lsp uses it
// only when its content has that hash and only root or the user can
// change it (see internal/sandbox/internal/initprog). It imports the
// sandbox package alone, whose stages dispatch in its package
// initializer, so it maps a tenth of ioh-lsp's code and starts about as
// fast as a minimal Go program.
//
// It does nothing when started by hand.
package main

import (
	"os"

	"github.com/ioh-lsp/ioh-lsp/internal/sandbox"
)

func main() {
	if sandbox.Init() {
		return
	}
	os.Stderr.WriteString("ioh-sandbox-init: this is the sandbox's init program; ioh-lsp starts it, it does nothing on its own\n")
	os.Exit(2)
}
