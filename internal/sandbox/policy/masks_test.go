package policy

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// TestMaskTargetsFollowChanges: the expansion of DefaultMasked is reused
// between spawns, but a secret created, removed or relinked in a home
// since is masked (or dropped) on the very next call, with no waiting
// period, including right after an earlier call in the same clock tick.
func TestMaskTargetsFollowChanges(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	elsewhere := t.TempDir()
	c := NewCache()
	has := func(p string) bool { return slices.Contains(c.maskTargets(nil), p) }
	aws := filepath.Join(home, ".aws")
	gcloud := filepath.Join(home, ".config", "gcloud")
	kube := filepath.Join(home, ".kube")
	if has(aws) || has(gcloud) {
		t.Fatal("masked before it exists")
	}
	followSteps(t, has, aws, []maskStep{
		{"created in the home", func() { os.Mkdir(aws, 0o700) }, aws, true},
		{"created in .config", func() { os.MkdirAll(gcloud, 0o700) }, gcloud, true},
		{"removed", func() { os.Remove(aws) }, aws, false},
		{"a symlink's target", func() { os.Symlink(elsewhere, kube) }, elsewhere, true},
		{"relinked", func() { os.Remove(kube); os.Symlink(home, kube) }, elsewhere, false},
	})
}

// maskStep is a change to the file tree and whether path is masked after.
type maskStep struct {
	name   string
	change func()
	path   string
	want   bool
}

// followSteps makes each change right after a call to has (same clock
// tick) and checks the next call sees it, then checks the state again
// once the cache could have settled. any is a path whose lookup
// populates the cache.
func followSteps(t *testing.T, has func(string) bool, any string, steps []maskStep) {
	t.Helper()
	for _, s := range steps {
		for _, wait := range []time.Duration{0, 2 * stampGrain} {
			time.Sleep(wait)
			has(any) // populate the cache
			s.change()
			if got := has(s.path); got != s.want {
				t.Fatalf("%s (after %v): masked %v, want %v", s.name, wait, got, s.want)
			}
			s.change = func() {} // the second round checks the cached state
		}
	}
}
