package rootfs

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"

	"golang.org/x/sys/unix"
)

// A PathID is what a view path named when it was bound (BindView): the
// file's device and inode, or that it was missing, or not bound at all.
type PathID struct {
	State    uint8 // PathSkipped, PathBound or PathMissing
	Dev, Ino uint64
}

// The states of a PathID.
const (
	PathSkipped = iota // not bound: a fresh mount covers it
	PathBound
	PathMissing
)

// BindView fills root, a tmpfs with the mount points of the fresh mounts,
// with read-only bind mounts of the view's paths (host paths, read below
// host) and the symlinks among them, and returns how many paths it bound.
// Paths at or below /proc, /dev and /tmp are left to the fresh mounts, and
// without network those below /sys to the fresh sysfs. ids, if not nil,
// takes what each view path named when it was bound (PathID).
func BindView(host, root string, view []string, links map[string]string, network bool, ids []PathID) (int, error) {
	bound := 0
	for i, p := range view {
		// /proc, /dev and /tmp get fresh mounts of their own.
		if within(p, "/proc") || within(p, "/dev") || within(p, "/tmp") {
			continue
		}
		if !network && within(p, "/sys") {
			// A fresh sysfs of the sandbox's own network namespace covers
			// /sys: binds below it would lie hidden under it, each a mount
			// for nothing (/sys/fs/cgroup alone is a dozen). Only the mount
			// point is needed.
			if err := MountPoint(root+"/sys", true); err != nil {
				return 0, err
			}
			continue
		}
		dst := filepath.Join(root, p)
		if err := BindInto(host+p, dst, false); err != nil {
			if errors.Is(err, os.ErrNotExist) {
				if ids != nil {
					ids[i] = PathID{State: PathMissing}
				}
				continue
			}
			return 0, fmt.Errorf("read view %s: %w", p, err)
		}
		if err := ReadOnlyTree(dst); err != nil {
			return 0, fmt.Errorf("read view %s read-only: %w", p, err)
		}
		if ids != nil {
			var st unix.Stat_t
			if err := unix.Stat(dst, &st); err != nil {
				return 0, fmt.Errorf("read view %s: %w", p, err)
			}
			ids[i] = PathID{State: PathBound, Dev: st.Dev, Ino: st.Ino}
		}
		bound++
	}
	// Symlinks among the view's roots (/lib → usr/lib), shortest first so
	// a link's parent exists before it.
	names := make([]string, 0, len(links))
	for l := range links {
		names = append(names, l)
	}
	sort.Strings(names)
	for _, l := range names {
		dst := filepath.Join(root, l)
		err := unix.Symlink(links[l], dst)
		if errors.Is(err, unix.ENOENT) {
			if os.MkdirAll(filepath.Dir(dst), 0o755) != nil {
				continue // its parent is a read-only bind: the link is there already or not needed
			}
			err = unix.Symlink(links[l], dst)
		}
		if err != nil && !errors.Is(err, unix.EEXIST) {
			return 0, fmt.Errorf("read view link %s: %w", l, err)
		}
	}
	return bound, nil
}

// ReadOnlyTree makes the mount at p and every mount below it read-only,
// nosuid and nodev (RemountTreeRO where mount_setattr fails).
func ReadOnlyTree(p string) error {
	attr := &unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY | unix.MOUNT_ATTR_NOSUID | unix.MOUNT_ATTR_NODEV}
	if err := unix.MountSetattr(unix.AT_FDCWD, p, unix.AT_RECURSIVE, attr); err != nil {
		return RemountTreeRO(p)
	}
	return nil
}

// Fits reports whether a root bound from the hint h fits the run whose
// view is run: exactly the same view (paths, links, masked paths, network
// choice), and each of h's paths still names what was bound there (ids,
// from BindView; host paths, read below host): the same file, or still
// missing.
func (h Hint) Fits(run Hint, host string, ids []PathID) bool {
	if run.Network != h.Network || !slices.Equal(run.View, h.View) || !maps.Equal(run.Links, h.Links) || !slices.Equal(run.Masked, h.Masked) {
		return false
	}
	for i, p := range h.View {
		if ids[i].State == PathSkipped {
			continue
		}
		var st unix.Stat_t
		err := unix.Stat(host+p, &st)
		switch ids[i].State {
		case PathMissing:
			if !errors.Is(err, unix.ENOENT) {
				return false
			}
		default:
			if err != nil || st.Dev != ids[i].Dev || st.Ino != ids[i].Ino {
				return false
			}
		}
	}
	return true
}

// MountsUnderMask reports whether one of mounts (empty ones aside) lies
// at or below one of masked: a build that mounts those before it masks
// has the mask hide them, and a mask bound ahead would stand in their
// way.
func MountsUnderMask(mounts, masked []string) bool {
	for _, r := range mounts {
		for _, m := range masked {
			if r != "" && within(r, m) {
				return true
			}
		}
	}
	return false
}

// MaskedAhead reports whether the path p shows one of the mask source's
// files now (hide: their PathIDs, PrepareHide): masked ahead, with
// nothing mounted since covering it, and still the file the path names.
func MaskedAhead(p string, hide [2]PathID) bool {
	var st unix.Stat_t
	if unix.Lstat(p, &st) != nil {
		return false
	}
	for _, id := range hide {
		if id.State == PathBound && st.Dev == id.Dev && st.Ino == id.Ino {
			return true
		}
	}
	return false
}
