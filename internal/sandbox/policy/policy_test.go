package policy

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

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
		cached := Default(Options{Env: o.Env, Cache: c})
		if diff := cmp.Diff(Default(o), cached); diff != "" {
			t.Fatalf("%s: cached view differs (-fresh +cached):\n%s", when, diff)
		}
		return cached
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
