//go:build unix

package view

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestUnder: component by component, so a path sharing a prefix with the
// root is not under it.
func TestUnder(t *testing.T) {
	for _, c := range []struct {
		p, root string
		want    bool
	}{
		{"/a", "/a", true},
		{"/a/b", "/a", true},
		{"/a/b/c", "/a", true},
		{"/ab", "/a", false},
		{"/a", "/a/b", false},
		{"/x", "/", true},
		{"/", "/", true},
		{"/etcfoo", "/etc", false},
		{"/etc-x/passwd", "/etc", false},
		{"/etc/passwd", "/etc", true},
		{"/et", "/etc", false},
		{"/etc", "/etc/passwd", false},
		{"relative", "/", false},
	} {
		if got := Under(c.p, c.root); got != c.want {
			t.Errorf("Under(%q, %q) = %v, want %v", c.p, c.root, got, c.want)
		}
	}
}

func TestMinimalCover(t *testing.T) {
	got := MinimalCover([]string{"/a/b", "/a-b", "/a", "/usr/lib", "/usr", "/x/y", "/x/yz"})
	want := []string{"/a", "/a-b", "/usr", "/x/y", "/x/yz"}
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("MinimalCover (-got +want):\n%s", diff)
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
	got := Carve([]string{home, filepath.Join(home, ".ssh", "id_ed25519")},
		[]string{filepath.Join(home, ".ssh"), filepath.Join(home, ".cargo", "credentials.toml")})
	want := []string{filepath.Join(home, ".cargo", "registry"), filepath.Join(home, "notes.txt"), filepath.Join(home, "src")}
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("Carve (-got +want):\n%s", diff)
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
				if (i != j && p != q && Under(p, q)) || (p == q && j < i) {
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
		if diff := cmp.Diff(MinimalCover(in), want); diff != "" {
			t.Errorf("MinimalCover(%v) (-got +want):\n%s", ps[1:n], diff)
		}
	}
	if got := MinimalCover(append([]string{}, ps...)); len(got) != 1 || got[0] != "/" {
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

// TestMinimalCoverEdges: duplicates once, "/" covers everything, and a
// path sharing a prefix is not covered.
func TestMinimalCoverEdges(t *testing.T) {
	for _, c := range []struct{ in, want []string }{
		{nil, nil},
		{[]string{"/a", "/a"}, []string{"/a"}},
		{[]string{"/etc/x", "/etcfoo", "/etc"}, []string{"/etc", "/etcfoo"}},
		{[]string{"/usr/lib", "/", "/etc"}, []string{"/"}},
	} {
		if got := MinimalCover(slices.Clone(c.in)); !slices.Equal(got, c.want) {
			t.Errorf("MinimalCover(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// joined is each of ps under base.
func joined(base string, ps ...string) []string {
	out := make([]string, 0, len(ps))
	for _, p := range ps {
		out = append(out, filepath.Join(base, p))
	}
	return out
}

// tree makes the files (a trailing slash: a directory) and the symlinks
// (name → target) under a resolved temporary directory and returns it.
func tree(t *testing.T, files []string, links map[string]string) string {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		full := filepath.Join(base, f)
		dir := filepath.Dir(full)
		if f[len(f)-1] == '/' {
			dir = full
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if f[len(f)-1] != '/' {
			if err := os.WriteFile(full, nil, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	for name, target := range links {
		if !filepath.IsAbs(target) && target[0] != '.' {
			target = filepath.Join(base, target)
		}
		if err := os.Symlink(target, filepath.Join(base, name)); err != nil {
			t.Fatal(err)
		}
	}
	return base
}

// TestCarveHostile: the roots minus the denied paths, as a minimal cover,
// for denied paths named as a caller may name them (a symlink, a trailing
// slash, a ".."), for a root equal to, under or only prefix-sharing with a
// denied path, and for a denied path too deep to carve around. Every
// result is also checked to reach no denied path, as named or resolved.
func TestCarveHostile(t *testing.T) {
	deep := "deep/1/2/3/4/5/6/7/8/9/10/"
	base := tree(t, []string{"home/.ssh/id_ed25519", "home/notes.txt", "home/src/main.go", "etc/passwd", "etcfoo/x", deep + "secret", "deep/1/sib"},
		map[string]string{"sshlink": "home/.ssh", "homelink": "home"})
	j := func(ps ...string) []string { return joined(base, ps...) }
	for _, c := range []struct {
		name              string
		roots, deny, want []string
	}{
		{"no denied path: the cover of the roots", j("home", "home/src"), nil, j("home")},
		{"a root holding a denied path is taken apart around it", j("home"), j("home/.ssh"), j("home/notes.txt", "home/src")},
		{"a root equal to a denied path is dropped", j("home/.ssh"), j("home/.ssh"), nil},
		{"a root under a denied path is dropped", j("home/src", "etc"), j("home"), j("etc")},
		{"a denied path with a trailing slash", j("home"), []string{base + "/home/.ssh/"}, j("home/notes.txt", "home/src")},
		{"a denied path with ..", j("home"), []string{base + "/home/src/../.ssh"}, j("home/notes.txt", "home/src")},
		{"a denied path that is a symlink denies its target", j("home"), j("sshlink"), j("home/notes.txt", "home/src")},
		// A symlink entry is kept as named (homelink): whether it leads to a
		// denied path is for the caller (the landlock tier drops it).
		{"a root holding a denied symlink and its target", j(""), j("sshlink"), j("deep", "etc", "etcfoo", "home/notes.txt", "home/src", "homelink")},
		{"a path sharing a prefix with a denied one is kept", j("etc", "etcfoo"), j("etc"), j("etcfoo")},
		{"a missing denied path still takes its root apart", j("home"), j("home/nope"), j("home/.ssh", "home/notes.txt", "home/src")},
		{"a denied path too deep to carve around leaves its branch out", j("deep"), j(deep + "secret"), j("deep/1/sib")},
		{"denying / leaves nothing", j("home", "etc"), []string{"/"}, nil},
		{"a root with a trailing slash is carved as cleaned", []string{base + "/home/"}, j("home/.ssh"), j("home/notes.txt", "home/src")},
		{"a root with .. is carved as cleaned", []string{base + "/etc/../home"}, j("home/.ssh"), j("home/notes.txt", "home/src")},
		{"a root equal to a denied path but for a trailing slash", []string{base + "/home/.ssh/"}, j("home/.ssh"), nil},
	} {
		got := Carve(slices.Clone(c.roots), c.deny)
		if diff := cmp.Diff(got, c.want); diff != "" {
			t.Errorf("%s: Carve(%q, %q) (-got +want):\n%s", c.name, c.roots, c.deny, diff)
		}
		for _, d := range c.deny {
			for _, q := range []string{filepath.Clean(d), Resolved(d)} {
				for _, p := range got {
					if q != "" && (Under(p, q) || Under(q, p)) {
						t.Errorf("%s: %s reaches the denied %s", c.name, p, q)
					}
				}
			}
		}
	}
}

// TestResolveRoots: relative and missing roots are dropped, unclean ones
// cleaned, symlinks resolved and noted, and "/" taken apart.
func TestResolveRoots(t *testing.T) {
	base := tree(t, []string{"home/src/", "etc/", "etcfoo/"}, map[string]string{"homelink": "home", "dangling": "nope"})
	j := func(p string) string { return base + "/" + p }
	none := map[string]string{}
	for _, c := range []struct {
		name  string
		roots []string
		want  []string
		links map[string]string
	}{
		{"relative and missing roots are dropped", []string{"home", j("nope"), j("dangling")}, nil, none},
		{"a trailing slash and .. are cleaned", []string{j("home") + "/", j("home/src/..")}, []string{j("home")}, none},
		{"a symlink is resolved and noted", []string{j("homelink")}, []string{j("home")}, map[string]string{j("homelink"): j("home")}},
		{"a symlink named with a trailing slash", []string{j("homelink") + "/"}, []string{j("home")}, map[string]string{j("homelink"): j("home")}},
		{"a root under another is covered", []string{j("home/src"), j("homelink")}, []string{j("home")}, map[string]string{j("homelink"): j("home")}},
		{"a path sharing a prefix is another root", []string{j("etcfoo"), j("etc")}, []string{j("etc"), j("etcfoo")}, none},
	} {
		got, links := ResolveRoots(c.roots)
		if diff := cmp.Diff(got, c.want); diff != "" {
			t.Errorf("%s: roots (-got +want):\n%s", c.name, diff)
		}
		if diff := cmp.Diff(links, c.links); diff != "" {
			t.Errorf("%s: links (-got +want):\n%s", c.name, diff)
		}
	}
	got, _ := ResolveRoots([]string{"/"})
	if !slices.Contains(got, "/etc") {
		t.Errorf(`"/" taken apart lacks /etc: %q`, got)
	}
	for _, p := range got {
		if p == "/" || p == "/tmp" || p == "/run" || p == "/home" || p == "/root" || IsSymlink(p) {
			t.Errorf(`"/" taken apart holds %s`, p)
		}
	}
}

func TestResolved(t *testing.T) {
	base := tree(t, []string{"home/"}, map[string]string{"homelink": "home", "dangling": "nope"})
	for p, want := range map[string]string{
		base + "/home":      "",
		base + "/nope":      "",
		base + "/dangling":  "",
		base + "/homelink":  base + "/home",
		base + "/home/":     base + "/home",
		base + "/home/../.": base,
	} {
		if got := Resolved(p); got != want {
			t.Errorf("Resolved(%q) = %q, want %q", p, got, want)
		}
	}
}

// TestExisting: what exists, each followed by its differing target, each
// once; a dangling link is kept (it exists), its missing target is not.
func TestExisting(t *testing.T) {
	base := tree(t, []string{"home/", "f"}, map[string]string{"homelink": "home", "dangling": "nope"})
	j := func(p string) string { return filepath.Join(base, p) }
	got := Existing([]string{j("nope"), j("homelink"), j("home"), j("f"), j("dangling"), j("f"), "relative"})
	want := []string{j("homelink"), j("home"), j("f"), j("dangling")}
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("Existing (-got +want):\n%s", diff)
	}
}
