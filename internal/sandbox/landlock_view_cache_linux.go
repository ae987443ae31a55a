package sandbox

import (
	"path/filepath"
	"sync"
	"time"

	"github.com/ioh-lsp/ioh-lsp/internal/sandbox/internal/view"
)

// landlockRunView is the landlock tier's per-run read view and writable
// roots: the view with the entries that link to a secret dropped, its
// entry types, and the writable roots carved around the secrets and the
// protected directories. Computing it costs about 0.4 ms per run (cover,
// carving, symlink checks). A server's runs mostly ask for the same, so
// its pool reuses the last result for viewCacheTTL (as the view's static
// part is, landlockView) while the run's inputs are the same and
//   - the working directory, the writable roots and the stage still
//     resolve to the same real paths (one lookup each per run: a root
//     swapped for a link to a home would otherwise keep a view carved for
//     the old target), and
//   - every symlink among the entries still holds the same target text
//     (one readlink each: one retargeted to a secret is dropped at once,
//     as without the cache), and no other entry has become a symlink
//     (one lstat each), and
//   - the view (its masks among it: what the policy found others may not
//     read in /etc, the credential files in the toolchain directories)
//     is the same.
type landlockRunView struct {
	view     []string
	types    string
	writable []string // carved, without the run's private directory
	masked   int
	links    map[string]string // entry that is a symlink → its target text
}

// runViewCache is a pool's last landlockRunView and what it was made for.
type runViewCache struct {
	mu  sync.Mutex
	key string
	at  time.Time
	v   *landlockRunView
}

// runViewFor returns the run's view for vs (Dir, Writable, Stage and View
// as landlockView takes them), whose writable roots are writable and
// whose protected directories present are kept read-only: c's (a pool's)
// while it holds one for the same inputs, else made now (always, for a
// nil c: the cold path). The result may be shared: callers must not
// modify it.
func runViewFor(c *viewCaches, vs *Spec, writable, present []string) *landlockRunView {
	if c == nil {
		return makeRunView(nil, vs, writable, present)
	}
	dyn := append(append([]string{vs.Dir}, writable...), stageLower(vs))
	real := make([]string, len(dyn))
	for i, p := range dyn {
		if p != "" {
			real[i], _ = filepath.EvalSymlinks(p)
		}
	}
	// The view holds the masks the policy found for this run: a secret
	// made since is in its key, and carved at once.
	key := keyOf(vs.View.Read, vs.View.Masked, dyn, real, present) // pool.go
	r := &c.runs
	r.mu.Lock()
	defer r.mu.Unlock()
	if v := r.v; v != nil && r.key == key && time.Since(r.at) <= viewCacheTTL && view.LinksHold(v.links) && view.NoNewLinks(v.links, v.view, v.writable) {
		return v
	}
	v := makeRunView(c, vs, writable, present)
	r.key, r.at, r.v = key, time.Now(), v
	return v
}

// makeRunView computes runViewFor's view, with c's caches of its parts
// (nil: none).
func makeRunView(c *viewCaches, vs *Spec, writable, present []string) *landlockRunView {
	k := c.kinds().orFresh()                                   // tier_landlock_rules_linux.go
	read, deny, masked := landlockView(c.landlockStatic(), vs) // readview.go
	// No entry may be a symlink to a secret: its rule would land on the
	// secret (tier_landlock_rules_linux.go).
	read = k.dropLinksToDenied(read, deny)
	wdeny := append(append([]string{}, deny...), present...)
	v := &landlockRunView{view: read, types: k.viewTypes(read), masked: masked,
		writable: view.CarvedWithin(k.dropLinksToDenied(view.Carve(writable, wdeny), wdeny), writable)}
	v.links = view.LinkTargets(append(append([]string{}, v.view...), v.writable...))
	return v
}
