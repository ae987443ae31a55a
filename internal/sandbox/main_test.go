package sandbox

import (
	"os"
	"testing"

	"github.com/ioh-lsp/ioh-lsp/internal/testenv"
)

// TestMain lets the test binary act as the sandbox's re-executed stages,
// exactly as cmd/ioh-lsp's main does, and as the probe helper that the
// containment tests run inside (and outside) the sandbox.
func TestMain(m *testing.M) {
	if Init() {
		return
	}
	if len(os.Args) > 1 && os.Args[1] == helperArg {
		os.Exit(helperMain(os.Args[2:]))
	}
	code := testenv.Main(m)
	cleanupHelper()
	os.Exit(code)
}
