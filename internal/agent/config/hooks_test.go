package config

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/ioh-lsp/ioh-lsp/internal/agent/policy"
)

// TestConfiguredHooksDirIsProtected: a work tree whose git configuration
// sets core.hooksPath to a directory of its own: the agent may not write
// a hook there (the host's next commit would run it), nor in .husky, as
// it may not write .git/hooks. The control: a plain source file, and the
// same directory name in a work tree that does not configure it, are
// writable.
func TestConfiguredHooksDirIsProtected(t *testing.T) {
	check := func(ws, rel string) policy.Effect {
		t.Helper()
		c, err := Load(LoadOptions{UserPath: filepath.Join(t.TempDir(), "none.yaml"), WorkspaceRoot: ws, Getenv: func(string) string { return "" }})
		if err != nil {
			t.Fatal(err)
		}
		p, err := policy.New(c.PolicyLayers()...)
		if err != nil {
			t.Fatal(err)
		}
		return p.CheckWrite(rel, rel).Effect
	}
	hooked, plain := t.TempDir(), t.TempDir()
	for _, ws := range []string{hooked, plain} {
		if err := os.MkdirAll(filepath.Join(ws, ".git"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write(t, filepath.Join(hooked, ".git", "config"), "[core]\n\thooksPath = ci/hooks\n")
	for _, rel := range []string{"ci/hooks/pre-commit", ".husky/pre-commit", ".git/hooks/pre-commit"} {
		if got := check(hooked, rel); got != policy.Deny {
			t.Errorf("write %s: %s, want deny", rel, got)
		}
	}
	if got := check(hooked, "src/main.go"); got == policy.Deny {
		t.Errorf("write src/main.go: %s, want it writable", got)
	}
	if got := check(plain, "ci/hooks/pre-commit"); got == policy.Deny {
		t.Errorf("write ci/hooks/pre-commit where no hooksPath names it: %s", got)
	}
}
