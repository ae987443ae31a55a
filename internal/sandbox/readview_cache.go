//go:build unix

package sandbox

import (
	"maps"
	"sync"
	"time"

	"github.com/ioh-lsp/ioh-lsp/internal/sandbox/internal/view"
)

// staticRootsCache is a pool's last resolution of the part of the linux
// tier's read view that does not change per run: the view's own roots
// (View.Read) resolved, with the symlinks among them (about 0.5 ms for
// the product's ~150). Reused for viewCacheTTL for the same view, as the
// landlock tier's view is (landlockView). A root replaced since is bound
// as it was resolved, or skipped if gone; a secret is never in the view
// because of this cache, since the linux tier masks the view's masks on
// every run.
type staticRootsCache struct {
	mu    sync.Mutex
	key   string
	at    time.Time
	roots []string
	links map[string]string
}

// linuxViewRoots is readViewRoots with its static part cached in c (a
// pool's; nil: resolved now, as on the cold path): only the working
// directory, the writable roots and the stage are resolved per run.
func linuxViewRoots(c *staticRootsCache, s *Spec) ([]string, map[string]string) {
	roots, links := c.resolve(s.View)
	dyn := append([]string{s.Dir}, s.Writable...)
	if s.Stage != nil {
		dyn = append(dyn, s.Stage.lower)
	}
	dynRoots, dynLinks := view.ResolveRoots(dyn)
	maps.Copy(links, dynLinks)
	return view.MinimalCover(append(roots, dynRoots...)), links
}

// resolve returns v's roots resolved and the symlinks among them, copies
// the caller may change; from c while it holds them for v.
func (c *staticRootsCache) resolve(v View) ([]string, map[string]string) {
	if c == nil {
		return view.ResolveRoots(append([]string{}, v.Read...))
	}
	key := viewKey(v)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.at.IsZero() || c.key != key || time.Since(c.at) > viewCacheTTL {
		c.roots, c.links = view.ResolveRoots(append([]string{}, v.Read...))
		c.key, c.at = key, time.Now()
	}
	return append([]string{}, c.roots...), maps.Clone(c.links) // ResolveRoots's map is never nil
}
