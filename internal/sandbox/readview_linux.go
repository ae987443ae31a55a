package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"golang.org/x/sys/unix"

	"github.com/ioh-lsp/ioh-lsp/internal/sandbox/internal/rootfs"
)

// mountRoot fills the private root (privateRoot, in the interim root).
// With a read view, the private root is a tmpfs holding read-only bind
// mounts of the view's roots and nothing else of the host (the plain one
// prepareRoot mounted, or one bound ahead from a hint); without one, the
// whole host root is bound read-only over the plain one.
func mountRoot(cfg *initConfig) (Mechanism, error) {
	if len(cfg.ReadView) == 0 {
		if err := unix.Mount(hostRoot, privateRoot, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
			return Mechanism{}, fmt.Errorf("bind host root: %w", err)
		}
		if err := readOnlyTree(privateRoot); err != nil {
			return Mechanism{}, fmt.Errorf("make host root read-only: %w", err)
		}
		return Mechanism{"readonly-root", StateApplied, "host root bound read-only, nosuid, nodev"}, nil
	}
	// The plain private root is a tmpfs with the mount points of the
	// fresh mounts (prepareRoot); one bound ahead from a hint holds the
	// run's view already (rootfs_hint_linux.go).
	bound, ahead := useHintedView(cfg)
	how := " (bound ahead of the run, from its hint)"
	if !ahead {
		how = ""
		var err error
		if bound, err = bindView(privateRoot, cfg.ReadView, cfg.ViewLinks, cfg.Network, nil); err != nil {
			return Mechanism{}, err
		}
	}
	return Mechanism{"read-view", StateApplied, fmt.Sprintf("private root holds only %d read-only paths%s: system directories, workspace, writable roots, toolchains; every home's other contents absent", bound, how)}, nil
}

// bindView fills root, a tmpfs with the mount points of the fresh mounts,
// with read-only bind mounts of the view's paths (host paths, read below
// hostRoot) and the symlinks among them, and returns how many paths it
// bound. ids, if not nil, takes which file each view path named when it
// was bound (or that it was missing, or not bound at all).
func bindView(root string, view []string, links map[string]string, network bool, ids []viewID) (int, error) {
	bound := 0
	for i, p := range view {
		// /proc, /dev and /tmp get fresh mounts of their own.
		if within(p, "/proc") || within(p, "/dev") || within(p, "/tmp") {
			continue
		}
		if !network && within(p, "/sys") {
			// A fresh sysfs of the sandbox's own network namespace covers
			// /sys (hideHostInfo): binds below it would lie hidden under
			// it, each a mount for nothing (/sys/fs/cgroup alone is a
			// dozen). Only the mount point is needed.
			if err := rootfs.MountPoint(root+"/sys", true); err != nil {
				return 0, err
			}
			continue
		}
		dst := filepath.Join(root, p)
		if err := rootfs.BindInto(hostRoot+p, dst, false); err != nil {
			if errors.Is(err, os.ErrNotExist) {
				if ids != nil {
					ids[i] = viewID{state: viewMissing}
				}
				continue
			}
			return 0, fmt.Errorf("read view %s: %w", p, err)
		}
		if err := readOnlyTree(dst); err != nil {
			return 0, fmt.Errorf("read view %s read-only: %w", p, err)
		}
		if ids != nil {
			var st unix.Stat_t
			if err := unix.Stat(dst, &st); err != nil {
				return 0, fmt.Errorf("read view %s: %w", p, err)
			}
			ids[i] = viewID{state: viewBound, dev: st.Dev, ino: st.Ino}
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

// sealRoot makes the private root's tmpfs read-only once every mount
// point on it exists.
func sealRoot(cfg *initConfig) error {
	if len(cfg.ReadView) == 0 {
		return nil
	}
	if err := unix.Mount("", privateRoot, "", unix.MS_REMOUNT|unix.MS_RDONLY|unix.MS_NOSUID|unix.MS_NODEV, ""); err != nil {
		return fmt.Errorf("seal private root: %w", err)
	}
	return nil
}

// readOnlyTree makes the mount at p and every mount below it read-only,
// nosuid and nodev.
func readOnlyTree(p string) error {
	attr := &unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY | unix.MOUNT_ATTR_NOSUID | unix.MOUNT_ATTR_NODEV}
	if err := unix.MountSetattr(unix.AT_FDCWD, p, unix.AT_RECURSIVE, attr); err != nil {
		return rootfs.RemountTreeRO(p)
	}
	return nil
}
