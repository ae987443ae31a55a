package policy

import (
	"maps"
	"os"
	"os/user"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/ioh-lsp/ioh-lsp/internal/sandbox/internal/view"
)

// DefaultMasked are the secrets hidden in every run, relative to each home
// directory (a leading "~/") or absolute (docs/sandbox-tiers.md#the-read-view).
var DefaultMasked = []string{
	"~/.ssh", "~/.aws", "~/.gnupg", "~/.netrc", "~/.docker", "~/.config/gcloud",
	"~/.kube", "~/.azure", "~/.config/gh", "~/.git-credentials", "~/.npmrc",
	"~/.pypirc", "~/.config/ioh", "~/.local/state/ioh", "/etc/shadow", "/etc/gshadow", "/etc/ssh",
}

// stateDirs are this process's ioh state directories (docs/trace.md): the
// trace database of the very run a command serves must not be readable
// inside it. ~/.local/state/ioh is in DefaultMasked.
func stateDirs() []string {
	var out []string
	if v := os.Getenv("IOH_STATE_DIR"); filepath.IsAbs(v) {
		out = append(out, v)
	}
	if v := os.Getenv("XDG_STATE_HOME"); filepath.IsAbs(v) {
		out = append(out, filepath.Join(v, "ioh"))
	}
	return out
}

// maskTargets expands DefaultMasked over every home on the machine (the
// user's, root's and /home/*) plus the state directories and extra,
// resolving symlinks so the real file is hidden too. The expansion of
// DefaultMasked is reused while nothing it depends on changed
// (homeMaskTargets); the state directories and extra are resolved on
// every call.
func (c *Cache) maskTargets(extra []string) []string {
	base := c.homeMaskTargets()
	seen := make(map[string]bool, len(base))
	out := append(make([]string, 0, len(base)+len(extra)+2), base...)
	for _, q := range base {
		seen[q] = true
	}
	for _, m := range append(stateDirs(), extra...) {
		if !filepath.IsAbs(m) {
			// Kept as given, so the Spec's validation refuses it by
			// name ("masked path … is not absolute") instead of the
			// secret staying readable because Lstat found nothing.
			out = append(out, m)
			continue
		}
		for _, q := range view.Existing([]string{m}) {
			if !seen[q] {
				seen[q] = true
				out = append(out, q)
			}
		}
	}
	return out
}

// homeMasks is a cache's last expansion of DefaultMasked and the modification
// times of everything it was read from: the directories holding each
// entry (a home, its .config, /etc …), /home (the list of homes) and
// /etc/passwd (the user's home). An entry created, removed, renamed or
// relinked changes its directory's time, so a stamp that still matches
// means the expansion does too: about 20 stats instead of 60 lookups
// and symlink resolutions per spawn.
type homeMasks struct {
	sync.Mutex
	home   string
	stamps map[string]int64
	out    []string
}

func (c *Cache) homeMaskTargets() []string {
	m := &c.home
	home := os.Getenv("HOME")
	m.Lock()
	defer m.Unlock()
	if m.out != nil && m.home == home && stampsHold(m.stamps) {
		return m.out
	}
	homes := map[string]bool{"/root": true}
	if h, err := os.UserHomeDir(); err == nil {
		homes[h] = true
	}
	// Stamped before reading, so a change made while reading shows next time.
	stamps := map[string]int64{"/home": mtime("/home"), "/etc/passwd": mtime("/etc/passwd")}
	if u, err := user.Current(); err == nil && u.HomeDir != "" {
		homes[u.HomeDir] = true
	}
	if ents, err := os.ReadDir("/home"); err == nil {
		for _, e := range ents {
			homes[filepath.Join("/home", e.Name())] = true
		}
	}
	out, reusable := expandStamped(homePaths(homes), stamps)
	m.home, m.stamps, m.out = home, stamps, nil
	if reusable {
		m.out = out
	}
	return out
}

// homePaths are DefaultMasked with each "~/" entry under every home, in
// a stable order: a pool's view caches are keyed by the masks, so the
// same homes must give the same list (a map's order would not).
func homePaths(homes map[string]bool) []string {
	sorted := slices.Sorted(maps.Keys(homes))
	var paths []string
	for _, m := range DefaultMasked {
		if rest, ok := strings.CutPrefix(m, "~/"); ok {
			for _, h := range sorted {
				paths = append(paths, filepath.Join(h, rest))
			}
		} else {
			paths = append(paths, m)
		}
	}
	return paths
}

// expandStamped expands paths as maskTargets does (each that exists, and
// its resolved target), after adding to stamps the modification time of
// the directory holding each path and each target: an entry created,
// removed, renamed or relinked there changes it. It also says whether
// the expansion may be reused while the stamps hold: not while one is so
// recent that the clock's granularity could give a later change the same
// time.
func expandStamped(paths []string, stamps map[string]int64) (out []string, reusable bool) {
	for _, p := range paths {
		for _, q := range []string{p, view.Resolved(p)} {
			if d := filepath.Dir(q); q != "" && stamps[d] == 0 {
				stamps[d] = mtime(d)
			}
		}
	}
	out = view.Existing(paths)
	recent := time.Now().Add(-stampGrain).UnixNano()
	for _, t := range stamps {
		if t > recent {
			return out, false
		}
	}
	return out, true
}

// stampGrain bounds the granularity of file times (a coarse clock tick).
const stampGrain = 50 * time.Millisecond

// mtime is p's modification time in nanoseconds, or -1 if it is missing.
func mtime(p string) int64 {
	fi, err := os.Stat(p)
	if err != nil {
		return -1
	}
	return fi.ModTime().UnixNano()
}

func stampsHold(stamps map[string]int64) bool {
	for p, t := range stamps {
		if mtime(p) != t {
			return false
		}
	}
	return true
}
