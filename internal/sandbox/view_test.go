//go:build unix

package sandbox

import (
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
	if c.View.Read[0] != "/usr" || len(c.Protected) != 1 || c.Protected[0] != root+"/.git" {
		t.Fatalf("validated view %+v, protected %v: want /usr and %s/.git", c.View, c.Protected, root)
	}
}

// testMaskedView is testView with masked paths added.
func testMaskedView(masked []string, readable ...string) View {
	return policy.Default(policy.Options{Readable: readable, Masked: masked, Cache: testViews})
}
