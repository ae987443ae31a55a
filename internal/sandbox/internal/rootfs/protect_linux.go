package rootfs

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/sys/unix"
)

// Protect makes each of paths (host paths, which the caller found in the
// writable roots writable) read-only in the new root: a bind of itself,
// read-only, nosuid and nodev, at its target when it is reached through
// symlinks (writes through a symlink land at its target), resolved as the
// host resolves it, reading the host's tree at host. nr maps a host path
// to its place in the new root. A path whose target is missing is
// counted in absent; one that cannot be resolved, whose target is outside
// every writable root (read-only already) or is a writable root itself
// (named exactly), or was protected already is skipped. A writable root
// inside a protected target was named exactly: it is bound again over the
// read-only copy (nosuid, nodev). done lists the protected targets.
func Protect(host string, nr func(string) string, writable, paths []string) (done []string, absent int, err error) {
	plain := map[string]bool{} // host directories seen not to be symlinks
	for _, p := range paths {
		t, err := Resolve(host, p, plain)
		if errors.Is(err, os.ErrNotExist) {
			absent++
			continue
		}
		if err != nil || !inAny(t, writable) || slices.Contains(writable, t) || slices.Contains(done, t) {
			continue
		}
		if err := SealInPlace(nr(t)); err != nil {
			return nil, 0, fmt.Errorf("protect %s: %w", p, err)
		}
		done = append(done, t)
	}
	for _, w := range writable {
		for _, p := range done {
			if w != p && within(w, p) {
				if err := BindInto(host+w, nr(w), false); err != nil {
					return nil, 0, fmt.Errorf("writable root %s: %w", w, err)
				}
				if err := SetMountAttr(nr(w), unix.MOUNT_ATTR_NOSUID|unix.MOUNT_ATTR_NODEV); err != nil {
					return nil, 0, fmt.Errorf("writable root %s: %w", w, err)
				}
			}
		}
	}
	return done, absent, nil
}

// SealInPlace binds p over itself, read-only, nosuid and nodev, with every
// mount below it (SetMountAttr).
func SealInPlace(p string) error {
	if err := unix.Mount(p, p, "", unix.MS_BIND, ""); err != nil {
		return err
	}
	return SetMountAttr(p, unix.MOUNT_ATTR_RDONLY|unix.MOUNT_ATTR_NOSUID|unix.MOUNT_ATTR_NODEV)
}

// within reports whether p is root or lies below it (as the sandbox
// package's within).
func within(p, root string) bool {
	rel, err := filepath.Rel(root, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

func inAny(p string, roots []string) bool {
	for _, r := range roots {
		if within(p, r) {
			return true
		}
	}
	return false
}
