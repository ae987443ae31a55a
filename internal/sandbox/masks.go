package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/ioh-lsp/ioh-lsp/internal/sandbox/internal/view"
)

// The masks of a run are its view's (View.Masked, built by the policy),
// the host's listening sockets and, without network, /run (maskedFor,
// linux.go). This file holds the mechanism's side: finding the sockets,
// and dropping masked paths from a staged copy.

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

// dropMasked removes from copyDir, a private copy of the directory lower
// (the landlock tier's copy stage), every masked path that lies in lower:
// the copy is not under the masks' paths, so a mask would not hide it.
// It returns how many it removed.
func dropMasked(copyDir, lower string, masked []string) (int, error) {
	n := 0
	for _, m := range masked {
		for _, p := range []string{m, view.Resolved(m)} {
			if p == "" || p == lower || !within(p, lower) {
				continue
			}
			rel, err := filepath.Rel(lower, p)
			if err != nil {
				continue
			}
			q := filepath.Join(copyDir, rel)
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
