//go:build unix

package sandbox

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"
)

// The read view is what contained code may read, deny by default: the
// Spec's View (View.Read, built by the policy: package
// internal/sandbox/policy), the working directory, the writable roots and
// the staged workspace, nothing else. The view's masks (View.Masked) are
// carved out even where a view root contains them (landlock) or hidden
// over them (linux), so the mask list stays a second line of defence.

// viewCacheTTL bounds how long the parts of a view that do not change per
// run (masks, system directories, toolchains) are reused: a secret created
// since is carved out within it.
const viewCacheTTL = 5 * time.Second

// landlockViewCache is a pool's last carved static part of a landlock
// view (Pool; pool_linux.go), keyed by the whole View.
type landlockViewCache struct {
	mu     sync.Mutex
	key    string
	at     time.Time
	static []string // the view's own roots, resolved and carved
	deny   []string
	masked int
}

// landlockView returns the landlock tier's read view, the masks carved
// out. With a cache (a pool's) the view's own roots are resolved and
// carved at most once per viewCacheTTL for the same view; without one
// (the cold path) on every call. The working directory, the writable
// roots and the stage are carved per run. It returns the view, the deny
// list (for carving the writable roots) and how many masks apply.
func landlockView(c *landlockViewCache, s *Spec) (view, deny []string, masked int) {
	if c == nil {
		c = &landlockViewCache{}
	}
	key := viewKey(s.View)
	c.mu.Lock()
	if c.at.IsZero() || c.key != key || time.Since(c.at) > viewCacheTTL {
		c.deny = append([]string{}, s.View.Masked...)
		roots, _ := resolveRoots(s.View.Read)
		c.static = carve(roots, c.deny)
		c.masked = len(c.deny)
		c.key, c.at = key, time.Now()
	}
	static, deny, masked := c.static, c.deny, c.masked
	c.mu.Unlock()
	dyn, _ := resolveRoots(append(append([]string{s.Dir}, s.Writable...), stageLower(s)))
	return minimalCover(append(append([]string{}, static...), carve(dyn, deny)...)), deny, masked
}

func stageLower(s *Spec) string {
	if s.Stage == nil {
		return ""
	}
	return s.Stage.lower
}

// readViewRoots returns the view's roots (the Spec's View.Read, its
// working directory, writable roots and stage), resolved, without one
// under another, and the symlinks among the unresolved roots (path →
// resolved target), which the linux tier recreates in its private root
// (/lib → usr/lib on a merged /usr). The masks are not carved out here:
// the linux tier hides them.
func readViewRoots(s *Spec) ([]string, map[string]string) {
	roots := append([]string{}, s.View.Read...)
	if s.Dir != "" {
		roots = append(roots, s.Dir)
	}
	roots = append(roots, s.Writable...)
	if s.Stage != nil {
		roots = append(roots, s.Stage.lower)
	}
	return resolveRoots(roots)
}

// resolveRoots resolves roots (dropping missing ones, taking "/" apart),
// keeps none under another, and notes the symlinks among them.
func resolveRoots(roots []string) ([]string, map[string]string) {
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
	return minimalCover(out), links
}

// carve drops the roots inside a denied path and replaces each root that
// contains a denied path by its entries (recursively), so the view never
// reaches a denied path.
func carve(roots, deny []string) []string {
	var realDeny []string
	for _, d := range deny {
		for _, q := range []string{filepath.Clean(d), resolved(d)} {
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
			if under(p, d) {
				return
			}
		}
		inside := false
		for _, d := range realDeny {
			if d != p && under(d, p) {
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
		add(r, 0)
	}
	return minimalCover(out)
}

// minimalCover sorts paths and drops those under another path in the set.
// Ordered component by component first (pathLess), every path's
// descendants follow it directly, so one comparison with the last path
// kept decides: n log n, not n² (the view has ~150 entries).
func minimalCover(ps []string) []string {
	sort.Slice(ps, func(i, j int) bool { return pathLess(ps[i], ps[j]) })
	var out []string
	for _, p := range ps {
		if n := len(out); n > 0 && under(p, out[n-1]) {
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

// under reports whether the clean absolute path p is root or lies below
// it: within without filepath.Rel's allocations, for the view's many
// comparisons.
func under(p, root string) bool {
	if root == "/" {
		return strings.HasPrefix(p, "/")
	}
	return p == root || (len(p) > len(root) && p[len(root)] == '/' && p[:len(root)] == root)
}
