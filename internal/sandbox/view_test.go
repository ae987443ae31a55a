//go:build unix

package sandbox

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ioh-lsp/ioh-lsp/internal/sandbox/policy"
)

// testViews is the tests' policy cache, as a server's adapter holds one:
// a view built afresh costs tens of ms under load (the walk of /etc, the
// homes, the toolchains), one through the cache about 1 ms, and the cache
// reuses only what is unchanged (policy's TestDefaultCachedMatchesFresh),
// so a secret a test makes is masked in its next Spec's view.
var testViews = policy.NewCache()

// testView is the product's view (policy.Default) with readable paths
// added: what a Spec that sandboxexec or `sandbox run` builds gets.
func testView(readable ...string) View {
	return policy.Default(policy.Options{Readable: readable, Cache: testViews})
}

// testViewEnv is testView for a run whose extra environment (its PATH,
// GOROOT …) says where its toolchains are.
func testViewEnv(env []string, readable ...string) View {
	return policy.Default(policy.Options{Env: env, Readable: readable, Cache: testViews})
}

// withView gives s the product's view when it has none: the tests' run
// helpers (run, runTier) call it, so a test that builds a Spec gets what
// a real caller's run gets; a test of the bare view runs its Spec itself.
func withView(s *Spec) {
	if isBareView(s.View) {
		s.View = testViewEnv(s.Env)
	}
}

func isBareView(v View) bool {
	return len(v.Read) == 0 && len(v.Masked) == 0 && len(v.ProtectedNames) == 0
}

// TestViewCleaned: a Spec's view is checked and copied by validation: a
// relative path in it is an ErrBadSpec naming the list, a protected name
// that leaves its root is refused, and the protected names become paths
// in every writable root.
func TestViewCleaned(t *testing.T) {
	root := t.TempDir()
	for _, v := range []View{{Read: []string{"rel"}}, {Masked: []string{"rel"}}, {ProtectedNames: []string{"../x"}}, {ProtectedNames: []string{"/abs"}}} {
		if _, err := (&Spec{Argv: []string{"x"}, View: v}).validate(); err == nil {
			t.Errorf("view %+v accepted", v)
		}
	}
	c, err := (&Spec{Argv: []string{"x"}, Writable: []string{root}, View: View{Read: []string{"/usr/"}, ProtectedNames: []string{".git"}}}).validate()
	if err != nil {
		t.Fatal(err)
	}
	if c.View.Read[0] != "/usr" || !slices.Contains(c.Protected, root+"/.git") {
		t.Fatalf("validated view %+v, protected %v: want /usr and %s/.git", c.View, c.Protected, root)
	}
}

// TestViewProtectsHostRunNames: a hand-built view that names no
// protected path still leaves what the host runs code from read-only in
// every writable root (the mechanism's floor, view.HostRunNames), and a
// view's own names come on top.
func TestViewProtectsHostRunNames(t *testing.T) {
	root := t.TempDir()
	for _, v := range []View{{Read: []string{"/usr"}}, {Read: []string{"/usr"}, ProtectedNames: []string{"build/hooks"}}} {
		c, err := (&Spec{Argv: []string{"x"}, Writable: []string{root}, View: v}).validate()
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range []string{".git", ".ioh", ".vscode", ".idea", ".github/workflows"} {
			if !slices.Contains(c.Protected, filepath.Join(root, n)) {
				t.Errorf("view %+v: %s is not protected in the writable root (protected: %v)", v, n, c.Protected)
			}
		}
		for _, n := range v.ProtectedNames {
			if !slices.Contains(c.Protected, filepath.Join(root, n)) {
				t.Errorf("view %+v: its own name %s is not protected", v, n)
			}
		}
	}
}

// TestRelativeMaskRefused: a mask the policy is given as a relative or
// ~/ path is refused by name, never dropped while the secret stays
// readable.
func TestRelativeMaskRefused(t *testing.T) {
	for _, m := range []string{"secrets/key", "~/.vault-token"} {
		v := policy.Default(policy.Options{Masked: []string{m}, Cache: testViews})
		_, err := (&Spec{Argv: []string{"/bin/true"}, Dir: t.TempDir(), View: v}).validate()
		if !errors.Is(err, ErrBadSpec) || !strings.Contains(err.Error(), m) {
			t.Errorf("masked %q: err %v, want an ErrBadSpec naming it", m, err)
		}
	}
	abs := filepath.Join(t.TempDir(), "key")
	if err := os.WriteFile(abs, []byte("k"), 0o600); err != nil {
		t.Fatal(err)
	}
	if v := policy.Default(policy.Options{Masked: []string{abs}, Cache: testViews}); !slices.Contains(v.Masked, abs) {
		t.Errorf("control: absolute mask %s not in the view's masks", abs)
	}
}

// testMaskedView is testView with masked paths added.
func testMaskedView(masked []string, readable ...string) View {
	return policy.Default(policy.Options{Readable: readable, Masked: masked, Cache: testViews})
}
