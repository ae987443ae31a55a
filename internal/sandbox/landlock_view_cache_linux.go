package sandbox

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// landlockRunView is the landlock tier's per-run read view and writable
// roots: the view with the entries that link to a secret dropped, its
// entry types, and the writable roots carved around the secrets and the
// protected directories. Computing it costs about 0.4 ms per run (cover,
// carving, symlink checks). A server's runs mostly ask for the same, so
// the last result is reused for viewCacheTTL (as the view's static part
// is, landlockView) while the run's inputs are the same and
//   - the working directory, the writable roots and the stage still
//     resolve to the same real paths (one lookup each per run: a root
//     swapped for a link to a home would otherwise keep a view carved for
//     the old target), and
//   - every symlink among the entries still holds the same target text
//     (one readlink each: one retargeted to a secret is dropped at once,
//     as without the cache), and
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

var runViews struct {
	mu  sync.Mutex
	key string
	at  time.Time
	v   *landlockRunView
}

// runViewFor returns the run's view for vs (Dir, Writable, Stage and View
// as landlockView takes them), whose writable roots are
// writable and whose protected directories present are kept read-only.
// The result is shared: callers must not modify it.
func runViewFor(vs *Spec, writable, present []string) *landlockRunView {
	dyn := append(append([]string{vs.Dir}, writable...), stageLower(vs))
	real := make([]string, len(dyn))
	for i, p := range dyn {
		if p != "" {
			real[i], _ = filepath.EvalSymlinks(p)
		}
	}
	// The view holds the masks the policy found for this run: a secret
	// made since is in its key, and carved at once.
	key := strings.Join([]string{viewKey(vs.View),
		strings.Join(dyn, "\x00"), strings.Join(real, "\x00"), strings.Join(present, "\x00")}, "\x02")
	runViews.mu.Lock()
	defer runViews.mu.Unlock()
	if v := runViews.v; v != nil && runViews.key == key && time.Since(runViews.at) <= viewCacheTTL && linksHold(v.links) {
		return v
	}
	view, deny, masked := landlockView(vs) // readview.go
	// No entry may be a symlink to a secret: its rule would land on the
	// secret (tier_landlock_rules_linux.go).
	view = dropLinksToDenied(view, deny)
	wdeny := append(append([]string{}, deny...), present...)
	v := &landlockRunView{view: view, types: viewTypes(view), masked: masked,
		writable: carvedWithin(dropLinksToDenied(carve(writable, wdeny), wdeny), writable)}
	v.links = linkTargets(append(append([]string{}, v.view...), v.writable...))
	runViews.key, runViews.at, runViews.v = key, time.Now(), v
	return v
}

// carvedWithin drops the entries carved out of a writable root that
// resolve outside every writable root: a symlink the workspace holds
// (git stores them), or one on the way to the entry. Landlock puts a
// rule on what the path resolves to, so such an entry would make its
// target writable (`link -> ~/.bashrc` in a repository with a .git, which
// is carved into its entries). The roots themselves are kept as the
// caller named them.
func carvedWithin(entries, roots []string) []string {
	var real []string
	for _, r := range roots {
		if q, err := filepath.EvalSymlinks(r); err == nil {
			real = append(real, q)
		}
	}
	out := entries[:0:0]
	for _, p := range entries {
		if contains(roots, p) {
			out = append(out, p)
			continue
		}
		t, err := filepath.EvalSymlinks(p)
		if err != nil {
			continue
		}
		for _, r := range real {
			if under(t, r) {
				out = append(out, p)
				break
			}
		}
	}
	return out
}

// linkTargets maps the paths among ps that were symlinks when their
// entry was looked at (lookViewEntry) to their target text now.
func linkTargets(ps []string) map[string]string {
	viewKinds.mu.Lock()
	var links []string
	for _, p := range ps {
		if lookViewEntry(p).link {
			links = append(links, p)
		}
	}
	viewKinds.mu.Unlock()
	out := make(map[string]string, len(links))
	for _, p := range links {
		t, err := os.Readlink(p)
		if err != nil {
			t = "\x00" + err.Error()
		}
		out[p] = t
	}
	return out
}

// linksHold reports whether every symlink of a cached view still holds
// the target text it had.
func linksHold(links map[string]string) bool {
	for p, t := range links {
		if got, err := os.Readlink(p); err != nil || got != t {
			return false
		}
	}
	return true
}
