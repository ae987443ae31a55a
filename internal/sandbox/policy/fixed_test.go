package policy

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestFixedMaskTargetsFollowChanges: the expansion of /etc's secrets and
// this program's state and config directories is reused between spawns,
// but a state directory created, removed or relinked since is masked (or
// dropped) on the very next call, including in the same clock tick.
func TestFixedMaskTargetsFollowChanges(t *testing.T) {
	parent := t.TempDir()
	elsewhere := t.TempDir()
	state := filepath.Join(parent, "state")
	cfg := filepath.Join(parent, "config")
	t.Setenv("IOH_STATE_DIR", state)
	t.Setenv("XDG_CONFIG_HOME", cfg)
	t.Setenv("HOME", t.TempDir())
	c := NewCache()
	has := func(p string) bool { return slices.Contains(c.fixedMaskTargets(), p) }
	if has(state) || has(filepath.Join(cfg, "ioh")) {
		t.Fatal("masked before it exists")
	}
	followSteps(t, has, state, []maskStep{ // masks_cache_test.go
		{"state directory created", func() { os.Mkdir(state, 0o700) }, state, true},
		{"config directory created", func() { os.MkdirAll(filepath.Join(cfg, "ioh"), 0o700) }, filepath.Join(cfg, "ioh"), true},
		{"removed", func() { os.Remove(state) }, state, false},
		{"a symlink's target", func() { os.Symlink(elsewhere, state) }, elsewhere, true},
		{"relinked", func() { os.Remove(state); os.Symlink(parent, state) }, elsewhere, false},
	})
	for _, p := range []string{"/etc/shadow", "/etc/gshadow"} {
		if _, err := os.Lstat(p); err == nil && !has(p) {
			t.Errorf("%s is not among the fixed masks", p)
		}
	}
}
