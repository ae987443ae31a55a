package sandbox

import (
	"os"
	"testing"
)

// TestMain lets the test binary act as the sandbox's re-executed stages,
// exactly as cmd/ioh-lsp's main does.
func TestMain(m *testing.M) {
	if Init() {
		return
	}
	os.Exit(m.Run())
}
