package sandbox

import (
	"fmt"
	"os"
	"testing"

	"github.com/ioh-lsp/ioh-lsp/internal/testenv"
)

// TestMain lets the test binary act as the sandbox's re-executed stages,
// exactly as cmd/ioh-lsp's main does (in the tests that call useReexec;
// the others' stages run in the small init program), and as the helper
// the probe hands its unknown actions to (moreHelpers).
func TestMain(m *testing.M) {
	if Init() {
		return
	}
	if len(os.Args) > 1 && os.Args[1] == helperArg {
		os.Exit(helperMain(os.Args[2:]))
	}
	if err := useSmallInitByDefault(); err != nil {
		fmt.Fprintln(os.Stderr, "sandbox tests:", err)
		cleanupHelper()
		os.Exit(2)
	}
	code := testenv.Main(m)
	cleanupHelper()
	os.Exit(code)
}
