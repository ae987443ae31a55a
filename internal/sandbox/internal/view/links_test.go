//go:build unix

package view

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestCarvedWithin: of a writable root's carved entries, those that
// resolve out of every root (a symlink to a file or a directory outside,
// a dangling one, a missing one, a sibling sharing the root's prefix) are
// dropped; a link to another entry stays, and a root is kept as named.
func TestCarvedWithin(t *testing.T) {
	base := tree(t, []string{"ws/src/", "ws/.git/", "ws-foo/x", "outside/bashrc"},
		map[string]string{"ws/rc": "outside/bashrc", "ws/outdir": "outside", "ws/srclink": "./src", "ws/gone": "ws/missing", "wslink": "ws"})
	j := func(ps ...string) []string { return joined(base, ps...) }
	for _, c := range []struct {
		name                 string
		entries, roots, want []string
	}{
		{"links out of the root are dropped", j("ws/src", "ws/rc", "ws/outdir", "ws/srclink", "ws/gone", "ws/nope"), j("ws"), j("ws/src", "ws/srclink")},
		{"a sibling sharing the root's prefix is dropped", j("ws/src", "ws-foo/x"), j("ws"), j("ws/src")},
		{"a root named by a link is kept as named", j("wslink"), j("wslink"), j("wslink")},
		{"a root is kept even where it does not resolve", j("ws/gone"), j("ws/gone"), j("ws/gone")},
		{"roots are compared as they resolve", j("ws/src", "ws/rc"), j("wslink"), j("ws/src")},
		{"no root: nothing", j("ws/src"), nil, []string{}},
	} {
		got := CarvedWithin(c.entries, c.roots)
		if diff := cmp.Diff(got, c.want); diff != "" {
			t.Errorf("%s: CarvedWithin (-got +want):\n%s", c.name, diff)
		}
	}
}

// TestLinkChecks: LinkTargets notes the symlinks, LinksHold fails once
// one is retargeted or removed, NoNewLinks once an entry that was not a
// symlink becomes one; unchanged, both hold (the control).
func TestLinkChecks(t *testing.T) {
	base := tree(t, []string{"a/", "b/", "f"}, map[string]string{"l": "a", "dangling": "nope"})
	j := func(p string) string { return filepath.Join(base, p) }
	ps := []string{j("a"), j("f"), j("l"), j("dangling")}
	links := LinkTargets(ps)
	if diff := cmp.Diff(links, map[string]string{j("l"): j("a"), j("dangling"): j("nope")}); diff != "" {
		t.Fatalf("LinkTargets (-got +want):\n%s", diff)
	}
	if !LinksHold(links) || !NoNewLinks(links, ps[:2], ps[2:]) {
		t.Fatalf("control: unchanged links do not hold")
	}
	relink := func(name, target string) {
		t.Helper()
		if err := os.RemoveAll(j(name)); err != nil {
			t.Fatal(err)
		}
		if target != "" {
			if err := os.Symlink(target, j(name)); err != nil {
				t.Fatal(err)
			}
		}
	}
	relink("l", j("b"))
	if LinksHold(links) {
		t.Errorf("LinksHold after a link was retargeted")
	}
	relink("l", j("a"))
	relink("a", j("b"))
	if !LinksHold(links) {
		t.Errorf("LinksHold fails with the links unchanged")
	}
	if NoNewLinks(links, ps) {
		t.Errorf("NoNewLinks after a directory became a link")
	}
	if !NoNewLinks(links, ps[1:]) {
		t.Errorf("NoNewLinks fails over paths none of which became a link")
	}
	relink("dangling", "")
	if LinksHold(links) {
		t.Errorf("LinksHold after a link was removed")
	}
}
