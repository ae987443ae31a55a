package pid1

import (
	"os"
	"testing"

	"github.com/ioh-lsp/ioh-lsp/internal/testenv"
)

// childEnv makes the test binary a child that applies one step to itself
// and reports (child, pid1_linux_test.go).
const childEnv = "IOH_PID1_TEST_CHILD"

func TestMain(m *testing.M) {
	if what := os.Getenv(childEnv); what != "" {
		os.Exit(child(what))
	}
	os.Exit(testenv.Main(m))
}
