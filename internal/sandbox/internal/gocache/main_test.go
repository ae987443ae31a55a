package gocache

import (
	"os"
	"testing"

	"github.com/ioh-lsp/ioh-lsp/internal/testenv"
)

// serveArg makes the test binary the go command's cache program, as the
// sandbox's gocache stage makes its own binary (TestGoBuildThroughServer).
const serveArg = "-gocache.serve"

func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == serveArg {
		os.Exit(Main(os.Args[2:]))
	}
	os.Exit(testenv.Main(m))
}
