package view

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// The path algebra of a view: the functions the mechanism applies a View
// with and the policy builds one with, on lists of absolute, slash-
// separated (Unix) paths. They read the file tree (Lstat, Readlink,
// EvalSymlinks, ReadDir) and nothing else: no run, no cache.

// Under reports whether p is root or lies below it, component by
// component: "/etc/passwd" and "/etc" are under "/etc", "/etcfoo" is not,
// and every absolute path is under "/". Both must be clean absolute
// paths (as filepath.Clean returns them: no trailing slash, no "." or
// ".." element); Under does not clean them, so that the view's many
// comparisons cost no allocation, and on others it answers by their bytes
// ("/etc/.." is under "/etc").
func Under(p, root string) bool {
	if root == "/" {
		return strings.HasPrefix(p, "/")
	}
	return p == root || (len(p) > len(root) && p[len(root)] == '/' && p[:len(root)] == root)
}

// MinimalCover returns the paths of ps, each once, without those Under
// another of them, in string order: the fewest roots that reach what ps
// reaches. It reorders ps. The paths must be clean (see Under). It takes
// n log n, not n² (the product's view has ~150 paths): ordered component
// by component first (pathLess), every path's descendants follow it
// directly, so one comparison with the last path kept decides.
func MinimalCover(ps []string) []string {
	sort.Slice(ps, func(i, j int) bool { return pathLess(ps[i], ps[j]) })
	var out []string
	for _, p := range ps {
		if n := len(out); n > 0 && Under(p, out[n-1]) {
			continue
		}
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

// pathLess orders paths with '/' before every other byte: "/a", "/a/b",
// "/a-b", where plain string order puts "/a-b" between the other two.
func pathLess(a, b string) bool {
	for i := 0; i < len(a) && i < len(b); i++ {
		ca, cb := a[i], b[i]
		switch {
		case ca == cb:
			continue
		case ca == '/':
			return true
		case cb == '/':
			return false
		}
		return ca < cb
	}
	return len(a) < len(b)
}

// Carve returns what roots reach minus the denied paths, as a minimal
// cover (MinimalCover): a root Under a denied path (one equal to it
// among them) is dropped, a root that holds a denied path is replaced by
// its entries, recursively, and the rest are kept whole. No path returned
// is Under a denied path or holds one, as deny names it (cleaned) or as
// it resolves (Resolved): a denied path that is a symlink denies its
// target too. Where carving cannot go on (a directory it cannot list,
// more than 8 levels below a root) it leaves that part out rather than
// reach a denied path. The comparison is of names, cleaned
// (filepath.Clean: a root "/home/u/" holding "/home/u/.ssh" is carved as
// "/home/u" is): the roots must be resolved (as ResolveRoots returns
// them; a root that is a symlink is compared as named), and an entry
// that is a symlink is kept as named, wherever it leads (the landlock
// tier drops those that lead to a denied path).
func Carve(roots, deny []string) []string {
	var realDeny []string
	for _, d := range deny {
		for _, q := range []string{filepath.Clean(d), Resolved(d)} {
			if q != "" && q != "." {
				realDeny = append(realDeny, q)
			}
		}
	}
	seen := map[string]bool{}
	var out []string
	var add func(p string, depth int)
	add = func(p string, depth int) {
		for _, d := range realDeny {
			if Under(p, d) {
				return
			}
		}
		inside := false
		for _, d := range realDeny {
			if d != p && Under(d, p) {
				inside = true
				break
			}
		}
		if !inside {
			if !seen[p] {
				seen[p] = true
				out = append(out, p)
			}
			return
		}
		if depth > 8 {
			return // too deep to carve: leave it out rather than expose a secret
		}
		ents, err := os.ReadDir(p)
		if err != nil {
			return // not listable: leave it out rather than expose a secret
		}
		for _, e := range ents {
			add(filepath.Join(p, e.Name()), depth+1)
		}
	}
	for _, r := range roots {
		add(filepath.Clean(r), 0)
	}
	return MinimalCover(out)
}

// ResolveRoots returns the roots as they resolve (filepath.EvalSymlinks
// after filepath.Clean), as a minimal cover, and the symlinks among the
// cleaned roots (path → resolved target). It drops the relative roots
// and the missing ones. A root that resolves to "/" is never returned:
// it is taken apart into the entries of "/" but /tmp, /run, /home, /root
// and the symlinks there (a view that names "/" reads the system, not
// every user's files).
func ResolveRoots(roots []string) ([]string, map[string]string) {
	links := map[string]string{}
	var out []string
	for _, r := range roots {
		if !filepath.IsAbs(r) {
			continue
		}
		p := filepath.Clean(r)
		real, err := filepath.EvalSymlinks(p)
		if err != nil {
			continue // missing: nothing to read there
		}
		if real != p {
			if fi, err := os.Lstat(p); err == nil && fi.Mode()&os.ModeSymlink != 0 {
				links[p] = real
			}
		}
		if real == "/" {
			// The whole root is never a view root: take it apart.
			ents, err := os.ReadDir("/")
			if err != nil {
				continue
			}
			for _, e := range ents {
				if n := "/" + e.Name(); n != "/tmp" && n != "/run" && n != "/home" && n != "/root" && e.Type()&os.ModeSymlink == 0 {
					out = append(out, n)
				}
			}
			continue
		}
		out = append(out, real)
	}
	return MinimalCover(out), links
}

// Resolved is p with its symlinks resolved (filepath.EvalSymlinks), or ""
// where that is p itself or p is missing: what a mask or a denied path
// also names, since a rule or a mount on a symlink lands on its target.
func Resolved(p string) string {
	r, err := filepath.EvalSymlinks(p)
	if err != nil || r == p {
		return ""
	}
	return r
}

// Existing returns the paths of ps that exist (os.Lstat: a dangling
// symlink exists), each followed by its target (Resolved) where that
// differs and exists, each path once, in that order: what a mask names,
// since a mount or a rule on a symlink lands on its target.
func Existing(ps []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, p := range ps {
		for _, q := range []string{p, Resolved(p)} {
			if q == "" || seen[q] {
				continue
			}
			if _, err := os.Lstat(q); err == nil {
				seen[q] = true
				out = append(out, q)
			}
		}
	}
	return out
}

// IsSymlink reports whether p itself (not its target) is a symlink now.
func IsSymlink(p string) bool {
	fi, err := os.Lstat(p)
	return err == nil && fi.Mode()&os.ModeSymlink != 0
}
