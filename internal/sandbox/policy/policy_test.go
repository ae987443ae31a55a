package policy

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/ioh-lsp/ioh-lsp/internal/sandbox/internal/view"
)

// TestDefaultCachedMatchesFresh: a view built through a Cache is the view
// built afresh, before and right after a secret appears in a home and a
// credential file in a toolchain directory (the cache reuses only what
// is unchanged); the bare Options give the system directories and no
// home.
func TestDefaultCachedMatchesFresh(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	venv := filepath.Join(t.TempDir(), "venv")
	if err := os.MkdirAll(filepath.Join(venv, "lib"), 0o755); err != nil {
		t.Fatal(err)
	}
	o := Options{Env: []string{"VIRTUAL_ENV=" + venv}}
	c := NewCache()
	check := func(when string) view.View {
		t.Helper()
		// Other packages' tests make and remove files in /etc while this
		// runs (the sandbox's TestEtcUnreadableLeftOut): a comparison is
		// judged only when the fresh views before and after the cached
		// one agree, that is when the host held still.
		var diff string
		for try := 0; try < 20; try++ {
			before := Default(o)
			cached := Default(Options{Env: o.Env, Cache: c})
			after := Default(o)
			if !cmp.Equal(before, after) {
				time.Sleep(50 * time.Millisecond)
				continue
			}
			if diff = cmp.Diff(after, cached); diff == "" {
				return cached
			}
			break
		}
		if diff == "" {
			t.Fatalf("%s: the host's view kept changing; nothing compared", when)
		}
		t.Fatalf("%s: cached view differs (-fresh +cached):\n%s", when, diff)
		return view.View{}
	}
	v := check("first")
	if !slices.Contains(v.Read, "/usr") || slices.Contains(v.Read, home) || !slices.Contains(v.ProtectedNames, ".git") {
		t.Fatalf("the default view: read %q, protected %q", v.Read, v.ProtectedNames)
	}
	if !slices.Contains(v.Read, filepath.Join(venv, "lib")) {
		t.Fatalf("the virtualenv's lib is not readable: %q", v.Read)
	}
	aws := filepath.Join(home, ".aws")
	cred := filepath.Join(venv, "lib", "credentials")
	if err := os.Mkdir(aws, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cred, []byte("token\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	v = check("after a secret appeared")
	if !slices.Contains(v.Masked, aws) || !slices.Contains(v.Masked, cred) {
		t.Fatalf("new secrets not masked: %q", v.Masked)
	}
}

// TestHomePathsAreStable: the homes' masks come in one order on every
// call (a pool's caches are keyed by the view, so an order that varied
// would miss them, and two views of one host would compare unequal).
func TestHomePathsAreStable(t *testing.T) {
	homes := map[string]bool{}
	for _, h := range []string{"/home/e", "/home/a", "/root", "/home/c", "/home/b", "/home/d"} {
		homes[h] = true
	}
	first := homePaths(homes)
	if first[0] != "/home/a/.ssh" || first[len(homes)-1] != "/root/.ssh" {
		t.Fatalf("the homes are not in order: %q", first[:len(homes)])
	}
	for i := 0; i < 50; i++ {
		if got := homePaths(homes); !slices.Equal(got, first) {
			t.Fatalf("call %d: another order:\n%q\nfirst:\n%q", i, got, first)
		}
	}
}
