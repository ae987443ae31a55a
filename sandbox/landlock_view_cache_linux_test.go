package sandbox

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestRunViewFollowsChanges: the landlock tier's per-run view is reused
// between runs, but equals a fresh computation after each change a run
// must see at once: the working directory swapped for a link to a home
// holding a secret (the secret stays out), and a symlink entry of a
// carved directory retargeted to the secret (the entry is dropped). The
// control: unchanged inputs reuse the cached view.
func TestRunViewFollowsChanges(t *testing.T) {
	// The view also holds toolchains found from the environment and the
	// machine's homes: the test's own, not the machine user's.
	t.Setenv("HOME", t.TempDir())
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	t.Setenv("IOH_STATE_DIR", t.TempDir())
	base := t.TempDir()
	home := filepath.Join(base, "home")
	secret := filepath.Join(home, "secret")
	other := filepath.Join(base, "other")
	for _, d := range []string{secret, other, filepath.Join(home, "src")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	link := filepath.Join(home, "link")
	if err := os.Symlink(other, link); err != nil {
		t.Fatal(err)
	}
	ws := filepath.Join(base, "ws")
	if err := os.Mkdir(ws, 0o700); err != nil {
		t.Fatal(err)
	}
	spec := func() *Spec {
		return &Spec{Dir: ws, Writable: []string{ws}, Readable: []string{home}, Masked: []string{secret}}
	}
	fresh := func() *landlockRunView {
		runViews.mu.Lock()
		runViews.v = nil
		runViews.mu.Unlock()
		return runViewFor(spec(), []string{ws}, nil)
	}
	check := func(step string) {
		t.Helper()
		got := runViewFor(spec(), []string{ws}, nil)
		want := fresh()
		if diff := cmp.Diff(got.view, want.view); diff != "" {
			t.Errorf("%s: view (-cached +fresh):\n%s", step, diff)
		}
		if diff := cmp.Diff(got.writable, want.writable); diff != "" {
			t.Errorf("%s: writable (-cached +fresh):\n%s", step, diff)
		}
		for _, p := range append(got.view, got.writable...) {
			if under(p, secret) || under(secret, p) {
				t.Errorf("%s: %s reaches the secret %s", step, p, secret)
			}
		}
	}
	v1 := runViewFor(spec(), []string{ws}, nil)
	if v2 := runViewFor(spec(), []string{ws}, nil); v2 != v1 {
		t.Errorf("control: the same inputs did not reuse the cached view")
	}
	if !slices.Contains(v1.view, link) {
		t.Fatalf("the carved home's link %s is not in the view: %v", link, v1.view)
	}
	// The link retargeted to the secret.
	runViewFor(spec(), []string{ws}, nil)
	if err := os.Remove(link); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(secret, link); err != nil {
		t.Fatal(err)
	}
	check("link retargeted")
	if got := runViewFor(spec(), []string{ws}, nil); slices.Contains(got.view, link) {
		t.Errorf("a link retargeted to the secret stays in the view")
	}
	// The working directory swapped for a link to the home.
	runViewFor(spec(), []string{ws}, nil)
	if err := os.Remove(ws); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(home, ws); err != nil {
		t.Fatal(err)
	}
	check("workspace swapped for a link to the home")
}
