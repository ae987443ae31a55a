//go:build unix

package sandbox

import (
	"maps"
	"sync"
	"time"
)

// staticRoots caches the part of the linux tier's read view that does not
// change per run: the view's own roots (View.Read) resolved, with the
// symlinks among them (about 0.5 ms for the product's ~150). Reused for
// viewCacheTTL for the same view, as the landlock tier's view is
// (landlockView). A root replaced since is bound as it was resolved, or
// skipped if gone; a secret is never in the view because of this cache,
// since the linux tier masks the view's masks on every run.
var staticRoots struct {
	mu    sync.Mutex
	key   string
	at    time.Time
	roots []string
	links map[string]string
}

// linuxViewRoots is readViewRoots with its static part cached: only the
// working directory, the writable roots and the stage are resolved per
// run.
func linuxViewRoots(s *Spec) ([]string, map[string]string) {
	key := viewKey(s.View)
	staticRoots.mu.Lock()
	if staticRoots.key != key || time.Since(staticRoots.at) > viewCacheTTL {
		staticRoots.roots, staticRoots.links = resolveRoots(append([]string{}, s.View.Read...))
		staticRoots.key, staticRoots.at = key, time.Now()
	}
	roots := append([]string{}, staticRoots.roots...)
	links := maps.Clone(staticRoots.links)
	staticRoots.mu.Unlock()
	dyn := append([]string{s.Dir}, s.Writable...)
	if s.Stage != nil {
		dyn = append(dyn, s.Stage.lower)
	}
	dynRoots, dynLinks := resolveRoots(dyn)
	maps.Copy(links, dynLinks)
	return minimalCover(append(roots, dynRoots...)), links
}
