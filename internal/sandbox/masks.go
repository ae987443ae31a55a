package sandbox

import (
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
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
func maskTargets(extra []string) []string {
	base := homeMaskTargets()
	seen := make(map[string]bool, len(base))
	out := append(make([]string, 0, len(base)+len(extra)+2), base...)
	for _, q := range base {
		seen[q] = true
	}
	for _, m := range append(stateDirs(), extra...) {
		out = addMask(out, seen, m)
	}
	return out
}

// addMask appends p and its resolved target to out, each once and only
// if it exists.
func addMask(out []string, seen map[string]bool, p string) []string {
	for _, q := range []string{p, resolved(p)} {
		if q != "" && !seen[q] {
			if _, err := os.Lstat(q); err == nil {
				seen[q] = true
				out = append(out, q)
			}
		}
	}
	return out
}

// homeMasks is the last expansion of DefaultMasked and the modification
// times of everything it was read from: the directories holding each
// entry (a home, its .config, /etc …), /home (the list of homes) and
// /etc/passwd (the user's home). An entry created, removed, renamed or
// relinked changes its directory's time, so a stamp that still matches
// means the expansion does too: about 20 stats instead of 60 lookups
// and symlink resolutions per spawn.
var homeMasks struct {
	sync.Mutex
	home   string
	stamps map[string]int64
	out    []string
}

func homeMaskTargets() []string {
	home := os.Getenv("HOME")
	homeMasks.Lock()
	defer homeMasks.Unlock()
	if homeMasks.out != nil && homeMasks.home == home && stampsHold(homeMasks.stamps) {
		return homeMasks.out
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
	var paths []string
	for _, m := range DefaultMasked {
		if rest, ok := strings.CutPrefix(m, "~/"); ok {
			for h := range homes {
				paths = append(paths, filepath.Join(h, rest))
			}
		} else {
			paths = append(paths, m)
		}
	}
	out, reusable := expandStamped(paths, stamps)
	homeMasks.home, homeMasks.stamps, homeMasks.out = home, stamps, nil
	if reusable {
		homeMasks.out = out
	}
	return out
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
		for _, q := range []string{p, resolved(p)} {
			if d := filepath.Dir(q); q != "" && stamps[d] == 0 {
				stamps[d] = mtime(d)
			}
		}
	}
	seen := map[string]bool{}
	for _, p := range paths {
		out = addMask(out, seen, p)
	}
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

func resolved(p string) string {
	r, err := filepath.EvalSymlinks(p)
	if err != nil || r == p {
		return ""
	}
	return r
}

// maxSocketMasks bounds the listening sockets a run hides one by one.
const maxSocketMasks = 4096

// hostUnixSockets lists the pathname unix sockets bound in this process's
// network namespace (the host's, read before the sandbox leaves it) that
// are listening, from /proc/net/unix. A run without network hides each
// one: a network namespace does not isolate pathname sockets, Landlock
// below ABI 9 cannot refuse connect(2) to them, and seccomp cannot read
// connect's address. What stays reachable: a socket bound after the run
// started, one bound under a relative path or renamed since, and one
// bound in another network namespace (a container's).
func hostUnixSockets() []string {
	data, err := os.ReadFile("/proc/net/unix")
	if err != nil {
		return nil
	}
	var out []string
	for _, line := range strings.Split(string(data), "\n")[1:] {
		f := strings.Fields(line)
		// Num RefCount Protocol Flags Type St Inode Path; flag 0x10000 is
		// __SO_ACCEPTCON, a listening socket.
		if len(f) < 8 || !strings.HasPrefix(f[7], "/") {
			continue
		}
		flags, err := strconv.ParseUint(f[3], 16, 32)
		if err != nil || flags&0x10000 == 0 {
			continue
		}
		out = append(out, f[7])
		if len(out) == maxSocketMasks {
			break
		}
	}
	return out
}

// dropMasked removes from view, a private copy of the directory lower
// (the landlock tier's copy stage), every masked path that lies in lower:
// the copy is not under the masks' paths, so a mask would not hide it.
// It returns how many it removed.
func dropMasked(view, lower string, masked []string) (int, error) {
	n := 0
	for _, m := range masked {
		for _, p := range []string{m, resolved(m)} {
			if p == "" || p == lower || !within(p, lower) {
				continue
			}
			rel, err := filepath.Rel(lower, p)
			if err != nil {
				continue
			}
			q := filepath.Join(view, rel)
			if _, err := os.Lstat(q); err != nil {
				continue
			}
			if err := os.RemoveAll(q); err != nil {
				return n, fmt.Errorf("mask %s in the staged copy: %w", m, err)
			}
			n++
		}
	}
	return n, nil
}
