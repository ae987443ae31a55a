package demo

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ioh-lsp/ioh-lsp/internal/agent/provider/replay"
)

func TestExtractGivesAModuleWithAFailingTest(t *testing.T) {
	dir := t.TempDir()
	l, err := Extract(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"go.mod", l.File, l.Test} {
		if _, err := os.Stat(filepath.Join(l.Project, f)); err != nil {
			t.Errorf("missing %s: %v", f, err)
		}
	}
	if _, err := replay.Load(l.Cassette); err != nil {
		t.Errorf("cassette: %v", err)
	}
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go tool on PATH to run the example's test")
	}
	cmd := exec.Command("go", "test", "./...")
	cmd.Dir = l.Project
	cmd.Env = append(os.Environ(), "GOFLAGS=", "GOTOOLCHAIN=local")
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatalf("the example's test passes before the fix; the demo would prove nothing:\n%s", out)
	}
	if !strings.Contains(string(out), "stats_test.go:") {
		t.Errorf("go test output names no test location:\n%s", out)
	}
}
