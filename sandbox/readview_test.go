//go:build unix

package sandbox

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestMinimalCover(t *testing.T) {
	got := minimalCover([]string{"/a/b", "/a-b", "/a", "/usr/lib", "/usr", "/x/y", "/x/yz"})
	want := []string{"/a", "/a-b", "/usr", "/x/y", "/x/yz"}
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("minimalCover (-got +want):\n%s", diff)
	}
	for _, c := range []struct {
		p, root string
		want    bool
	}{{"/a", "/a", true}, {"/a/b", "/a", true}, {"/ab", "/a", false}, {"/a", "/a/b", false}, {"/x", "/", true}} {
		if got := under(c.p, c.root); got != c.want {
			t.Errorf("under(%q, %q) = %v", c.p, c.root, got)
		}
	}
}

// TestCarve: a root holding a denied path is taken apart around it, a
// root inside a denied path is dropped, and nothing denied stays reachable.
func TestCarve(t *testing.T) {
	home := t.TempDir()
	for _, p := range []string{"src/proj/main.go", ".ssh/id_ed25519", ".cargo/registry/x", ".cargo/credentials.toml", "notes.txt"} {
		full := filepath.Join(home, p)
		os.MkdirAll(filepath.Dir(full), 0o755)
		os.WriteFile(full, nil, 0o644)
	}
	got := carve([]string{home, filepath.Join(home, ".ssh", "id_ed25519")},
		[]string{filepath.Join(home, ".ssh"), filepath.Join(home, ".cargo", "credentials.toml")})
	want := []string{filepath.Join(home, ".cargo", "registry"), filepath.Join(home, "notes.txt"), filepath.Join(home, "src")}
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("carve (-got +want):\n%s", diff)
	}
}
