package acp

import (
	"os"
	"testing"

	"github.com/ioh-lsp/ioh-lsp/internal/testenv"
	"github.com/ioh-lsp/ioh-lsp/sandbox"
)

// TestMain lets the test binary serve as the sandbox's re-executed init
// stage (the server tests verify changes in the real sandbox) and gives
// the tests a world of their own.
func TestMain(m *testing.M) {
	if sandbox.Init() {
		return
	}
	os.Exit(testenv.Main(m))
}
