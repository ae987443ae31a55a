//go:build unix

package sandbox

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestLinuxViewRootsMatchUncached: the linux tier's view with its static
// part cached is the uncached view, for one run and for the next with
// another working directory (a symlink, noted among the links) and
// writable root.
func TestLinuxViewRootsMatchUncached(t *testing.T) {
	// The view also holds toolchains found from the environment and the
	// machine's homes: the test's own, not the machine user's.
	t.Setenv("HOME", t.TempDir())
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	t.Setenv("IOH_STATE_DIR", t.TempDir())
	a, b := t.TempDir(), t.TempDir()
	link := filepath.Join(t.TempDir(), "ws")
	if err := os.Symlink(b, link); err != nil {
		t.Fatal(err)
	}
	for _, s := range []*Spec{
		{Dir: a, Writable: []string{a}, View: testView("/opt")},
		{Dir: link, Writable: []string{link, a}, View: testView("/opt")},
	} {
		gotRoots, gotLinks := linuxViewRoots(nil, s)
		wantRoots, wantLinks := readViewRoots(s)
		if diff := cmp.Diff(gotRoots, wantRoots); diff != "" {
			t.Errorf("roots for %+v (-cached +uncached):\n%s", s, diff)
		}
		if diff := cmp.Diff(gotLinks, wantLinks); diff != "" {
			t.Errorf("links for %+v (-cached +uncached):\n%s", s, diff)
		}
	}
}
