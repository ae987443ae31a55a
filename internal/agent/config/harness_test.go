package config

import (
	"path/filepath"
	"strings"
	"testing"
)

// `harness` is read from the user config; a workspace (trusted or not)
// cannot switch what the model is shown, and is told so.
func TestHarnessFromTheUserConfigOnly(t *testing.T) {
	dir := t.TempDir()
	user := filepath.Join(dir, "user.yaml")
	ws := filepath.Join(dir, "ws")
	write(t, user, "harness: {masking: false}\n")
	write(t, WorkspacePath(ws), "harness: {review_changes: false}\n")
	c, err := Load(LoadOptions{UserPath: user, WorkspaceRoot: ws})
	if err != nil {
		t.Fatal(err)
	}
	if !c.Harness.NoMasking || c.Harness.NoReview {
		t.Errorf("harness = %+v, want masking off from the user config and review kept", c.Harness)
	}
	if !strings.Contains(strings.Join(c.Warnings, "\n"), "harness ignored") {
		t.Errorf("no warning for the workspace's harness key: %q", c.Warnings)
	}
	// The control: nothing written keeps both on.
	write(t, user, "approve: ask\n")
	write(t, WorkspacePath(ws), "approve: ask\n")
	if c, err = Load(LoadOptions{UserPath: user, WorkspaceRoot: ws}); err != nil || c.Harness != (Harness{}) {
		t.Errorf("default harness = %+v, %v", c.Harness, err)
	}
}
