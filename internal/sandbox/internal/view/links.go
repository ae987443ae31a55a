package view

import (
	"os"
	"path/filepath"
	"slices"
)

// CarvedWithin returns the entries (carved out of the writable roots,
// Carve) that resolve Under one of the roots as they resolve, in their
// order; an entry equal to a root as named is kept whatever it resolves
// to. It drops an entry that is a symlink leading out of every root (git
// stores them in a workspace), or one with a symlink on the way, and a
// missing one: a Landlock rule is put on what a path resolves to, so
// such an entry would make its target writable (`link -> ~/.bashrc` in a
// repository with a .git, which is carved into its entries).
func CarvedWithin(entries, roots []string) []string {
	var real []string
	for _, r := range roots {
		if q, err := filepath.EvalSymlinks(r); err == nil {
			real = append(real, q)
		}
	}
	out := entries[:0:0]
	for _, p := range entries {
		if slices.Contains(roots, p) {
			out = append(out, p)
			continue
		}
		t, err := filepath.EvalSymlinks(p)
		if err != nil {
			continue
		}
		for _, r := range real {
			if Under(t, r) {
				out = append(out, p)
				break
			}
		}
	}
	return out
}

// LinkTargets maps each path of ps that is a symlink now to its target
// text (os.Readlink), or to "\x00" and the error where that fails: what
// LinksHold and NoNewLinks check a cached view against later.
func LinkTargets(ps []string) map[string]string {
	out := map[string]string{}
	for _, p := range ps {
		if !IsSymlink(p) {
			continue
		}
		t, err := os.Readlink(p)
		if err != nil {
			t = "\x00" + err.Error()
		}
		out[p] = t
	}
	return out
}

// LinksHold reports whether every symlink of links (LinkTargets) still
// holds the target text it had: false if one was retargeted, removed or
// replaced by a non-link. One readlink each.
func LinksHold(links map[string]string) bool {
	for p, t := range links {
		if got, err := os.Readlink(p); err != nil || got != t {
			return false
		}
	}
	return true
}

// NoNewLinks reports whether no path of the lists that was not a symlink
// when links was taken (LinkTargets, over the same lists) has become one
// since: one lstat each. A cached view's entry swapped for a link to a
// home on the host (a patch applied, a checkout) would otherwise give the
// home the entry's rights; a fresh view drops it (CarvedWithin).
func NoNewLinks(links map[string]string, lists ...[]string) bool {
	for _, list := range lists {
		for _, p := range list {
			if _, was := links[p]; !was && IsSymlink(p) {
				return false
			}
		}
	}
	return true
}
