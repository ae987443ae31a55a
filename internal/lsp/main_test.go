package lsp_test

import (
	"os"
	"testing"

	"github.com/ioh-lsp/ioh-lsp/internal/sandbox"
	"github.com/ioh-lsp/ioh-lsp/internal/testenv"
)

// TestMain lets the test binary serve as the sandbox's re-executed init
// stage: the integration tests verify changes in the real sandbox, which
// re-executes the running binary.
func TestMain(m *testing.M) { os.Exit(testenv.Main(m, sandbox.Init)) }
