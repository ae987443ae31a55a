package generate

import (
	"os"
	"testing"

	"github.com/ioh-lsp/ioh-lsp/internal/sandbox"
	"github.com/ioh-lsp/ioh-lsp/internal/testenv"
)

// TestMain runs the sandbox's stages (the generated suite is run through
// the real harness) and gives the tests a world of their own.
func TestMain(m *testing.M) { os.Exit(testenv.Main(m, sandbox.Init)) }
