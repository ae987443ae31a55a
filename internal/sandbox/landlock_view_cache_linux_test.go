package sandbox

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ioh-lsp/ioh-lsp/internal/sandbox/internal/view"
	"github.com/ioh-lsp/ioh-lsp/internal/sandbox/sandboxtest"
)

// TestRunViewFollowsChanges: the landlock tier's per-run view is reused
// between a pool's runs, but equals a fresh computation (the cold path's)
// after each change a run must see at once: the working directory
// swapped for a link to a home holding a secret (the secret stays out),
// and a symlink entry of a carved directory retargeted to the secret (the
// entry is dropped). The control: unchanged inputs reuse the pool's
// cached view, and the cold path never reuses one.
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
		return &Spec{Dir: ws, Writable: []string{ws}, View: testMaskedView([]string{secret}, home)}
	}
	c := &viewCaches{} // a pool's
	fresh := func() *landlockRunView { return runViewFor(nil, spec(), []string{ws}, nil) }
	check := func(step string) {
		t.Helper()
		got := runViewFor(c, spec(), []string{ws}, nil)
		want := fresh()
		if diff := cmp.Diff(got.view, want.view); diff != "" {
			t.Errorf("%s: view (-cached +fresh):\n%s", step, diff)
		}
		if diff := cmp.Diff(got.writable, want.writable); diff != "" {
			t.Errorf("%s: writable (-cached +fresh):\n%s", step, diff)
		}
		for _, p := range append(got.view, got.writable...) {
			if view.Under(p, secret) || view.Under(secret, p) {
				t.Errorf("%s: %s reaches the secret %s", step, p, secret)
			}
		}
	}
	v1 := runViewFor(c, spec(), []string{ws}, nil)
	if v2 := runViewFor(c, spec(), []string{ws}, nil); v2 != v1 {
		t.Errorf("control: the same inputs did not reuse the cached view")
	}
	if a, b := fresh(), fresh(); a == b {
		t.Errorf("the cold path reused a view")
	}
	if !slices.Contains(v1.view, link) {
		t.Fatalf("the carved home's link %s is not in the view: %v", link, v1.view)
	}
	// The link retargeted to the secret.
	runViewFor(c, spec(), []string{ws}, nil)
	if err := os.Remove(link); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(secret, link); err != nil {
		t.Fatal(err)
	}
	check("link retargeted")
	if got := runViewFor(c, spec(), []string{ws}, nil); slices.Contains(got.view, link) {
		t.Errorf("a link retargeted to the secret stays in the view")
	}
	// The working directory swapped for a link to the home.
	runViewFor(c, spec(), []string{ws}, nil)
	if err := os.Remove(ws); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(home, ws); err != nil {
		t.Fatal(err)
	}
	check("workspace swapped for a link to the home")
}

// TestLandlockCarvedRootLinks: a workspace with a .git is carved into its
// entries (the .git stays read-only), and an entry that is a symlink
// pointing out of the workspace (a file, a directory) must not make its
// target writable in the landlock tier: the contained writes fail, the
// same writes uncontained land (the control). A symlink to another entry
// of the workspace still writes there.
func TestLandlockCarvedRootLinks(t *testing.T) {
	tiersHere(t)
	home := sandboxtest.Dir(t)
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	t.Setenv("XDG_STATE_HOME", filepath.Join(home, ".local", "state"))
	t.Setenv("IOH_STATE_DIR", filepath.Join(home, "state"))
	work, out := filepath.Join(home, "proj"), sandboxtest.Dir(t)
	secret := filepath.Join(out, "bashrc")
	for _, d := range []string{filepath.Join(work, ".git"), filepath.Join(work, "src")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(secret, []byte("orig\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for link, target := range map[string]string{"rc": secret, "outdir": out, "srclink": "src"} {
		if err := os.Symlink(target, filepath.Join(work, link)); err != nil {
			t.Fatal(err)
		}
	}
	script := "echo pwned >> rc; echo new > outdir/new; echo ok > srclink/x; test -f src/x && echo inside-ok"
	o, output := runTier(t, Spec{Argv: []string{"sh", "-c", script}, Dir: work, Writable: []string{work}, Backend: BackendLandlock})
	b, _ := os.ReadFile(secret)
	_, newErr := os.Lstat(filepath.Join(out, "new"))
	if string(b) != "orig\n" || newErr == nil {
		t.Errorf("a symlink entry of the carved workspace made its target writable: %q, new file made: %v (exit %d)\n%s", b, newErr == nil, o.ExitCode, output)
	}
	if !bytes.Contains([]byte(output), []byte("inside-ok")) {
		t.Errorf("a symlink to another entry of the workspace no longer writes there:\n%s", output)
	}
	ctl := exec.Command("sh", "-c", script)
	ctl.Dir = work
	ctlOut, err := ctl.CombinedOutput()
	b, _ = os.ReadFile(secret)
	if _, nerr := os.Lstat(filepath.Join(out, "new")); err != nil || string(b) != "orig\npwned\n" || nerr != nil {
		t.Fatalf("uncontained control did not have the effect, so the case proves nothing: %v %q\n%s", err, b, ctlOut)
	}
}

// TestRunViewEntrySwappedForLink: a carved writable root's entry (the
// root holds a protected .git, so it is carved into its entries) swapped
// on the host for a symlink to a directory outside every root is dropped
// from a pool's cached view at once, as from a fresh one: the runner
// would put the entry's read and write rule on the link's target. The
// control: before the swap the entry is writable through the cache.
func TestRunViewEntrySwappedForLink(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	base := t.TempDir()
	ws, outside := filepath.Join(base, "ws"), filepath.Join(base, "outside")
	for _, d := range []string{filepath.Join(ws, ".git"), filepath.Join(ws, "src"), outside} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	present := []string{filepath.Join(ws, ".git")}
	spec := func() *Spec { return &Spec{Dir: ws, Writable: []string{ws}, View: testView()} }
	c := &viewCaches{} // a pool's
	src := filepath.Join(ws, "src")
	if v := runViewFor(c, spec(), []string{ws}, present); !slices.Contains(v.writable, src) {
		t.Fatalf("control: %s is not among the carved writable entries %v", src, v.writable)
	}
	if err := os.Remove(src); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, src); err != nil {
		t.Fatal(err)
	}
	got, fresh := runViewFor(c, spec(), []string{ws}, present), runViewFor(nil, spec(), []string{ws}, present)
	if slices.Contains(fresh.writable, src) {
		t.Fatalf("the fresh view keeps the link %s writable: %v", src, fresh.writable)
	}
	if slices.Contains(got.writable, src) {
		t.Errorf("the pool's cached view keeps %s, now a link to %s, writable: %v", src, outside, got.writable)
	}
}
