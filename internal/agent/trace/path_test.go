package trace

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestStateDirRelative: a relative XDG_STATE_HOME is ignored (the XDG
// spec), a relative IOH_STATE_DIR is an error naming it; neither puts the
// trace database under the current directory (QA: XDG_STATE_HOME=relst
// created ./relst/ioh/*.db inside the workspace).
func TestStateDirRelative(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	got, err := StateDir(env(map[string]string{"XDG_STATE_HOME": "relst", "HOME": "/h"}))
	if err != nil || got != filepath.FromSlash("/h/.local/state/ioh") {
		t.Errorf("relative XDG_STATE_HOME: %q, %v; want /h/.local/state/ioh", got, err)
	}
	if _, err := StateDir(env(map[string]string{"IOH_STATE_DIR": "relst", "HOME": "/h"})); err == nil || !strings.Contains(err.Error(), `IOH_STATE_DIR="relst" is a relative path`) {
		t.Errorf("relative IOH_STATE_DIR: %v, want an error naming it", err)
	}
	// Controls: absolute values stand.
	if got, err := StateDir(env(map[string]string{"XDG_STATE_HOME": "/x", "HOME": "/h"})); err != nil || got != filepath.FromSlash("/x/ioh") {
		t.Errorf("absolute XDG_STATE_HOME: %q, %v", got, err)
	}
	if got, err := StateDir(env(map[string]string{"IOH_STATE_DIR": "/s/", "HOME": "/h"})); err != nil || got != filepath.FromSlash("/s") {
		t.Errorf("absolute IOH_STATE_DIR: %q, %v", got, err)
	}
}
