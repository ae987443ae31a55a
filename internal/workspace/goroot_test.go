package workspace

import (
	"os/exec"
	"strings"
	"testing"
)

// goroot is `go env GOROOT`: the real corpus for tests that compare with
// ripgrep. It skips when no go command is on PATH.
func goroot(tb testing.TB) string {
	tb.Helper()
	out, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		tb.Skipf("go env GOROOT: %v", err)
	}
	return strings.TrimSpace(string(out))
}
