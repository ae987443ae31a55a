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

// TestMinimalCoverMatchesPairwise: the n log n cover equals the plain
// pairwise one on paths that share prefixes in every way ("/a-b" sorts
// between "/a" and "/a/b" in string order).
func TestMinimalCoverMatchesPairwise(t *testing.T) {
	ps := []string{"/", "/a", "/a/b", "/a-b", "/a-b/c", "/a.b", "/a/b/c", "/ab", "/b/a", "/b/a-", "/b/a/x", "/b/a-/y", "/c/d/e", "/c/d-e", "/c/d/e", "/z"}
	pairwise := func(ps []string) []string {
		var out []string
		for i, p := range ps {
			covered := false
			for j, q := range ps {
				if (i != j && p != q && under(p, q)) || (p == q && j < i) {
					covered = true
				}
			}
			if !covered {
				out = append(out, p)
			}
		}
		return minimalSorted(out)
	}
	for n := 2; n <= len(ps); n++ {
		in := append([]string{}, ps[1:n]...) // without "/", which covers all
		want := pairwise(append([]string{}, in...))
		if diff := cmp.Diff(minimalCover(in), want); diff != "" {
			t.Errorf("minimalCover(%v) (-got +want):\n%s", ps[1:n], diff)
		}
	}
	if got := minimalCover(append([]string{}, ps...)); len(got) != 1 || got[0] != "/" {
		t.Errorf("with / in the set: %v", got)
	}
}

func minimalSorted(ps []string) []string {
	out := append([]string{}, ps...)
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if out[j] < out[i] {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
}

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
