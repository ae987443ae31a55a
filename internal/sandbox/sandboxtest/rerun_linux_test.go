package sandboxtest_test

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/ioh-lsp/ioh-lsp/internal/sandbox/sandboxtest"
)

const childEnv = "IOH_SANDBOXTEST_CHILD"

// TestRerun: a re-run gets the environment ChildEnv makes (so a
// race-built one does not sleep at exit) and runs in a home the sandbox
// sees; one without user namespaces cannot create one (contained), while
// this process can (the control).
func TestRerun(t *testing.T) {
	if os.Getenv(childEnv) != "" {
		t.Skip("already the re-run")
	}
	out := sandboxtest.Rerun{Run: "^TestRerunChild$", Want: "TestRerunChild", Env: []string{childEnv + "=1"}}.Do(t)
	if !strings.Contains(out, "GORACE=atexit_sleep_ms=0") || !strings.Contains(out, "dir=/var/tmp/ioh-test-") {
		t.Errorf("the re-run's environment:\n%s", out)
	}
	t.Run("without user namespaces", func(t *testing.T) {
		if b, err := exec.Command("unshare", "-U", "true").CombinedOutput(); err != nil {
			sandboxtest.Unavailable(t, "this process cannot create a user namespace either, so the re-run proves nothing: %v %s", err, b)
		}
		sandboxtest.Rerun{Run: "^TestRerunChild$", Want: "TestRerunChild", NoUserns: true, Env: []string{childEnv + "=1"}}.Do(t)
	})
}

// TestRerunChild runs inside TestRerun's re-runs.
func TestRerunChild(t *testing.T) {
	if os.Getenv(childEnv) == "" {
		t.Skip("runs only inside TestRerun's re-runs")
	}
	t.Logf("GORACE=%s", os.Getenv("GORACE"))
	if dir, err := os.Getwd(); err == nil {
		t.Logf("dir=%s", dir) // the home given (testenv gave HOME a root of its own)
	}
	b, err := exec.Command("unshare", "-U", "true").CombinedOutput()
	if sandboxtest.NoUserns() != (err != nil) {
		t.Errorf("re-run without user namespaces: %v; unshare -U: %v %s", sandboxtest.NoUserns(), err, b)
	}
}
