package sandbox

import (
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
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
// resolving symlinks so the real file is hidden too.
func maskTargets(extra []string) []string {
	homes := map[string]bool{"/root": true}
	if h, err := os.UserHomeDir(); err == nil {
		homes[h] = true
	}
	if u, err := user.Current(); err == nil && u.HomeDir != "" {
		homes[u.HomeDir] = true
	}
	if ents, err := os.ReadDir("/home"); err == nil {
		for _, e := range ents {
			homes[filepath.Join("/home", e.Name())] = true
		}
	}
	seen := map[string]bool{}
	var out []string
	add := func(p string) {
		for _, q := range []string{p, resolved(p)} {
			if q != "" && !seen[q] {
				if _, err := os.Lstat(q); err == nil {
					seen[q] = true
					out = append(out, q)
				}
			}
		}
	}
	for _, m := range DefaultMasked {
		if rest, ok := strings.CutPrefix(m, "~/"); ok {
			for h := range homes {
				add(filepath.Join(h, rest))
			}
		} else {
			add(m)
		}
	}
	for _, m := range append(stateDirs(), extra...) {
		add(m)
	}
	return out
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
