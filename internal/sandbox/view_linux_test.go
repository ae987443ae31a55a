package sandbox

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ioh-lsp/ioh-lsp/internal/sandbox/sandboxtest"
)

// TestTierViewIsWhatIsRead: what a run may read is exactly its Spec's
// view, in both Linux tiers (and, through TestTierContainmentOtherModes,
// without user namespaces and as an ordinary user). A directory outside
// the view is unreadable; the same directory in the view is read; a
// bare view (the probe's directory and the stage's libraries) reads not
// even /etc/passwd, which the product's view holds; a path the view masks is unreadable
// inside a directory it holds. Outside the sandbox all of them are read.
func TestTierViewIsWhatIsRead(t *testing.T) {
	h := helperPath(t)
	w := newWorld(t)
	extra := sandboxtest.Dir(t)
	mark := fmt.Sprintf("VIEW-%d", os.Getpid())
	for _, name := range []string{"mark", "hidden"} {
		if err := os.WriteFile(filepath.Join(extra, name), []byte(mark+"-"+name), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// A bare view holds the probe's directory and the libraries a
	// dynamically linked stage program loads (this test binary: the exec
	// stage an ordinary user's run needs is it again, started inside the
	// view); the mechanism adds neither, and without them such a run
	// fails to start, a setup error, never a wider view.
	stageLibs := []string{"/lib", "/lib64", "/usr/lib", "/usr/lib64"}
	cases := []struct {
		name   string
		view   View
		path   string
		inside bool
	}{
		{"outside the view", testView(w.helperDir), filepath.Join(extra, "mark"), false},
		{"in the view", testView(w.helperDir, extra), filepath.Join(extra, "mark"), true},
		{"masked in the view", testMaskedView([]string{filepath.Join(extra, "hidden")}, w.helperDir, extra), filepath.Join(extra, "hidden"), false},
		{"system file in a bare view", View{Read: append([]string{w.helperDir}, stageLibs...)}, "/etc/passwd", false},
		{"system file in the product's view", testView(w.helperDir), "/etc/passwd", true},
	}
	for _, tier := range tiersHere(t) {
		for _, c := range cases {
			t.Run(tier+"/"+c.name, func(t *testing.T) {
				_, output := runTier(t, Spec{Argv: []string{h, helperArg, "read", c.path}, Dir: w.work, Writable: []string{w.work}, View: c.view, Backend: tier})
				want := mark
				if c.path == "/etc/passwd" {
					want = "root:"
				}
				if got := strings.Contains(output, want); got != c.inside {
					t.Errorf("%s read inside: %v, want %v:\n%s", c.path, got, c.inside, output)
				}
				if ctl, err := exec.Command(h, helperArg, "read", c.path).CombinedOutput(); err != nil || !strings.Contains(string(ctl), want) {
					t.Fatalf("control: %s is not read outside the sandbox either: %v\n%s", c.path, err, ctl)
				}
			})
		}
	}
}

// TestTierToolchainLinkInWorkspace: a toolchain directory the
// environment names inside the writable workspace (VIRTUAL_ENV=<ws>/.venv,
// or the same through a link to the workspace, as /tmp is on macOS)
// cannot widen the next run's view. The first run plants .venv/lib ->
// a directory outside every root; the second run, whose view is built
// from the same environment, cannot read through it, in both Linux
// tiers. Controls: the secret is read outside the sandbox, and the
// venv's own files are read inside (the workspace holds them).
func TestTierToolchainLinkInWorkspace(t *testing.T) {
	for _, tier := range tiersHere(t) {
		for _, named := range []string{"as-is", "through-a-link"} {
			t.Run(tier+"/"+named, func(t *testing.T) {
				ws, outside := sandboxtest.Dir(t), sandboxtest.Dir(t)
				mark := fmt.Sprintf("VENV-SECRET-%d", os.Getpid())
				if err := os.WriteFile(filepath.Join(outside, "secret"), []byte(mark), 0o644); err != nil {
					t.Fatal(err)
				}
				venv := filepath.Join(ws, ".venv")
				if err := os.MkdirAll(filepath.Join(venv, "bin"), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(venv, "bin", "own"), []byte("VENV-OWN"), 0o644); err != nil {
					t.Fatal(err)
				}
				seen := venv // the venv as the environment names it
				if named == "through-a-link" {
					alias := filepath.Join(sandboxtest.Dir(t), "ws")
					if err := os.Symlink(ws, alias); err != nil {
						t.Fatal(err)
					}
					seen = filepath.Join(alias, ".venv")
				}
				env := []string{"VIRTUAL_ENV=" + seen}
				spec := func(argv ...string) Spec {
					return Spec{Argv: argv, Dir: ws, Writable: []string{ws}, Env: env, Backend: tier, View: testViewEnv(env)}
				}
				runTier(t, spec("ln", "-s", outside, filepath.Join(venv, "lib")))
				if _, err := os.Readlink(filepath.Join(venv, "lib")); err != nil {
					t.Fatalf("the first run did not plant the link: %v", err)
				}
				_, got := runTier(t, spec("cat", filepath.Join(seen, "lib", "secret"), filepath.Join(venv, "lib", "secret"), filepath.Join(venv, "bin", "own")))
				if strings.Contains(got, mark) {
					t.Errorf("the second run read %s through the planted .venv/lib:\n%s", outside, got)
				}
				if !strings.Contains(got, "VENV-OWN") {
					t.Errorf("control: the venv's own file was not read inside:\n%s", got)
				}
				if b, err := exec.Command("cat", filepath.Join(seen, "lib", "secret")).Output(); err != nil || !strings.Contains(string(b), mark) {
					t.Errorf("uncontained control: %v %q", err, b)
				}
			})
		}
	}
}

// TestReadOutsideOwnRoots: view entries in a run's own roots, as written,
// resolved, or through an ancestor once resolved, are dropped; the rest
// (a sibling sharing the root's prefix too) are kept in order.
func TestReadOutsideOwnRoots(t *testing.T) {
	ws, other := t.TempDir(), t.TempDir()
	link := filepath.Join(other, "to-ws")
	if err := os.Symlink(ws, link); err != nil {
		t.Fatal(err)
	}
	// An entry below a link to the workspace, whose own last part is a
	// link out (planted by an earlier run): neither it as written nor it
	// resolved is in ws, but its parent resolved is.
	if err := os.MkdirAll(filepath.Join(ws, ".venv"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(other, filepath.Join(ws, ".venv", "lib")); err != nil {
		t.Fatal(err)
	}
	viaLink := filepath.Join(link, ".venv", "lib")
	got := readOutsideOwnRoots([]string{"/usr", filepath.Join(ws, ".venv", "lib"), link, viaLink, other, "/bin", ws + "foo"}, []string{ws, "/"})
	if want := []string{"/usr", other, "/bin", ws + "foo"}; strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("got %v, want %v", got, want)
	}
}
