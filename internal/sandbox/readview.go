//go:build unix

package sandbox

import (
	"sync"
	"time"

	"github.com/ioh-lsp/ioh-lsp/internal/sandbox/internal/view"
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
func landlockView(c *landlockViewCache, s *Spec) (read, deny []string, masked int) {
	if c == nil {
		c = &landlockViewCache{}
	}
	key := viewKey(s.View)
	c.mu.Lock()
	if c.at.IsZero() || c.key != key || time.Since(c.at) > viewCacheTTL {
		c.deny = append([]string{}, s.View.Masked...)
		roots, _ := view.ResolveRoots(s.View.Read)
		c.static = view.Carve(roots, c.deny)
		c.masked = len(c.deny)
		c.key, c.at = key, time.Now()
	}
	static, deny, masked := c.static, c.deny, c.masked
	c.mu.Unlock()
	dyn, _ := view.ResolveRoots(append(append([]string{s.Dir}, s.Writable...), stageLower(s)))
	return view.MinimalCover(append(append([]string{}, static...), view.Carve(dyn, deny)...)), deny, masked
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
	return view.ResolveRoots(roots)
}
