package rootfs

import (
	"fmt"
	"strconv"

	"golang.org/x/sys/unix"
)

// SwitchRoot makes root (a private root built on WorkDir) this process's
// root and returns detach, which leaves nothing else reachable: one
// detach of WorkDir takes the host's tree and every interim mount (one
// RCU grace period, which any unmount waits for; the caller may overlap
// it with other work). Before it, the private root is moved (from
// WorkDir, where it was built) over the interim root's own root and
// becomes this process's root. Not pivot_root, which visits every thread
// of the machine to move the roots of those that used the old one (none
// here). Below the private root only the interim tmpfs is left,
// read-only, holding the mount point of WorkDir and, once detach has run,
// nothing but that empty directory; reaching it would take chroot, which
// a sandboxed command must neither be able to do (no capabilities) nor
// call (seccomp). detach finds WorkDir through a descriptor opened before
// the move: no path of the new root leads there. Until detach has
// succeeded the caller must not report or start anything.
func SwitchRoot(root string) (detach func() error, err error) {
	work, err := unix.Open(WorkDir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("interim work: %w", err)
	}
	if err := enterPrivateRoot(root); err != nil {
		unix.Close(work)
		return nil, err
	}
	return func() error {
		// The descriptor's magic link in the private root's fresh /proc
		// names the mount itself.
		err := unix.Unmount("/proc/self/fd/"+strconv.Itoa(work), unix.MNT_DETACH)
		unix.Close(work)
		if err != nil {
			return fmt.Errorf("detach old root: %w", err)
		}
		return nil
	}, nil
}

// enterPrivateRoot seals the interim root, moves root over it and
// changes this process's root and working directory to it.
func enterPrivateRoot(root string) error {
	// What is left below the private root is read-only too.
	flags := uintptr(unix.MS_REMOUNT | unix.MS_BIND | unix.MS_RDONLY | unix.MS_NOSUID | unix.MS_NODEV | unix.MS_NOEXEC)
	if err := unix.Mount("", "/", "", flags, ""); err != nil {
		return fmt.Errorf("seal interim root: %w", err)
	}
	if err := unix.Chdir(root); err != nil {
		return fmt.Errorf("chdir new root: %w", err)
	}
	if err := unix.Mount(".", "/", "", unix.MS_MOVE, ""); err != nil {
		return fmt.Errorf("move new root: %w", err)
	}
	if err := unix.Chroot("."); err != nil {
		return fmt.Errorf("enter new root: %w", err)
	}
	if err := unix.Chdir("/"); err != nil {
		return fmt.Errorf("chdir: %w", err)
	}
	return nil
}
