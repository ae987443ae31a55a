// Package rootfs builds the linux tier's private root: the interim root
// a stage prepares before its config (Interim: the sealed mask source,
// the fresh /proc, /dev, /tmp and sysfs), the mount steps (mount points
// made without probing, binds, read-only binds, masks bound from the
// sealed source, recursive mount attributes, overlays), a read view's
// binds (BindView), protected paths made read-only at their targets as
// the host resolves them (Protect), and the switch into the private root
// (SwitchRoot); and a warm stage's root hint: its format, its encoding in
// the stage's environment, the view bound ahead from it (Prebind) and the
// check that it fits a run (Hint.Fits). It knows nothing of a run and
// takes plain paths and flags: internal/sandbox decides which paths are
// bound, masked or protected, and whether a run takes the hinted root.
package rootfs

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// CreateFile creates the file p, which must not exist, holding data.
func CreateFile(p string, mode uint32, data []byte) error {
	fd, err := unix.Open(p, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, mode)
	if err != nil {
		return fmt.Errorf("create %s: %w", p, err)
	}
	for len(data) > 0 && err == nil {
		var n int
		n, err = unix.Write(fd, data)
		data = data[n:]
	}
	if cerr := unix.Close(fd); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", p, err)
	}
	return nil
}

// MountPoint makes sure something exists at dst to mount on: a new
// directory (dir) or empty file, with missing parent directories, each
// made with one call and nothing probed first. What is there already is
// kept, as it is (mount then judges it).
func MountPoint(dst string, dir bool) error {
	err := MakeNode(dst, dir)
	if errors.Is(err, unix.ENOENT) && dst != "/" {
		if err = MountPoint(filepath.Dir(dst), true); err == nil {
			err = MakeNode(dst, dir)
		}
	}
	if err != nil && !errors.Is(err, unix.EEXIST) {
		return fmt.Errorf("mount point %s: %w", dst, err)
	}
	return nil
}

// MakeNode makes the directory (dir) or empty file p, which must not
// exist, with one call.
func MakeNode(p string, dir bool) error {
	if dir {
		return unix.Mkdir(p, 0o755)
	}
	fd, err := unix.Open(p, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o644)
	if err == nil {
		err = unix.Close(fd)
	}
	return err
}

// BindInto bind-mounts src on dst (recursively), creating dst when it is
// missing (only possible on a private tmpfs); ro makes the bind
// read-only, nosuid and nodev.
func BindInto(src, dst string, ro bool) error {
	var st unix.Stat_t
	if err := unix.Stat(src, &st); err != nil {
		return err
	}
	if err := MountPoint(dst, st.Mode&unix.S_IFMT == unix.S_IFDIR); err != nil {
		return err
	}
	if err := unix.Mount(src, dst, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
		return err
	}
	if ro {
		return unix.Mount("", dst, "", unix.MS_REMOUNT|unix.MS_BIND|unix.MS_RDONLY|unix.MS_NOSUID|unix.MS_NODEV, "")
	}
	return nil
}

// BindRO binds src on dst (not recursively), read-only, nosuid, nodev
// and noexec.
func BindRO(src, dst string) error {
	if err := unix.Mount(src, dst, "", unix.MS_BIND, ""); err != nil {
		return err
	}
	return unix.Mount("", dst, "", unix.MS_REMOUNT|unix.MS_BIND|unix.MS_RDONLY|unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "")
}

// Mask hides p: an empty directory over a directory, an empty file over
// anything else, bound from the mask source at hide (hide+"/dir" and
// hide+"/file", sealed by the caller). A missing p is nothing to hide; a
// symlink is left alone (its resolved target is masked on its own).
func Mask(hide, p string) error {
	var st unix.Stat_t
	if err := unix.Lstat(p, &st); err != nil {
		if errors.Is(err, unix.ENOENT) {
			return nil
		}
		return err
	}
	src := hide + "/file"
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFLNK:
		return nil
	case unix.S_IFDIR:
		src = hide + "/dir"
	}
	return unix.Mount(src, p, "", unix.MS_BIND, "")
}

// MountOverlay mounts at dst, nosuid and nodev, an overlay of lower (its
// lower directories, colon-separated, the topmost first) with the upper
// and work directories upper and work; with userxattr (which an overlay
// mounted in a user namespace needs), or without it on a kernel that does
// not know the option (EINVAL).
func MountOverlay(dst, lower, upper, work string) error {
	opts := fmt.Sprintf("lowerdir=%s,upperdir=%s,workdir=%s", lower, upper, work)
	err := unix.Mount("overlay", dst, "overlay", unix.MS_NOSUID|unix.MS_NODEV, opts+",userxattr")
	if errors.Is(err, unix.EINVAL) {
		err = unix.Mount("overlay", dst, "overlay", unix.MS_NOSUID|unix.MS_NODEV, opts)
	}
	return err
}

// RemountTreeRO is the fallback for kernels without mount_setattr: remount
// every mount under root read-only, one by one, from mountinfo.
func RemountTreeRO(root string) error {
	data, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return err
	}
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		if len(f) < 5 {
			continue
		}
		mp := f[4]
		if mp != root && !strings.HasPrefix(mp, root+"/") {
			continue
		}
		flags := uintptr(unix.MS_REMOUNT | unix.MS_BIND | unix.MS_RDONLY | unix.MS_NOSUID | unix.MS_NODEV)
		if err := unix.Mount("", mp, "", flags, ""); err != nil && !errors.Is(err, unix.EACCES) {
			return fmt.Errorf("remount %s: %w", mp, err)
		}
	}
	return nil
}

// SetMountAttr adds attr to the mount at p and every mount below it,
// keeping the flags they have (a remount that dropped a locked flag would
// fail in a user namespace).
func SetMountAttr(p string, attr uint64) error {
	err := unix.MountSetattr(unix.AT_FDCWD, p, unix.AT_RECURSIVE, &unix.MountAttr{Attr_set: attr})
	if !errors.Is(err, unix.ENOSYS) {
		return err
	}
	var extra uintptr
	for a, f := range map[uint64]uintptr{unix.MOUNT_ATTR_RDONLY: unix.MS_RDONLY, unix.MOUNT_ATTR_NOSUID: unix.MS_NOSUID, unix.MOUNT_ATTR_NODEV: unix.MS_NODEV, unix.MOUNT_ATTR_NOEXEC: unix.MS_NOEXEC} {
		if attr&a != 0 {
			extra |= f
		}
	}
	var st unix.Statfs_t
	if err := unix.Statfs(p, &st); err != nil {
		return err
	}
	keep := uintptr(0)
	for s, f := range map[int64]uintptr{unix.ST_RDONLY: unix.MS_RDONLY, unix.ST_NOSUID: unix.MS_NOSUID, unix.ST_NODEV: unix.MS_NODEV, unix.ST_NOEXEC: unix.MS_NOEXEC, unix.ST_NOATIME: unix.MS_NOATIME, unix.ST_RELATIME: unix.MS_RELATIME, unix.ST_NODIRATIME: unix.MS_NODIRATIME} {
		if int64(st.Flags)&s != 0 {
			keep |= f
		}
	}
	return unix.Mount("", p, "", unix.MS_REMOUNT|unix.MS_BIND|keep|extra, "")
}

// Resolve resolves the symlinks of the host path p as the host would
// (absolute targets from the host's root), reading the host tree mounted
// at root. plain (if not nil) holds the paths found not to be symlinks by
// earlier calls, which are not looked at again (the protected paths of
// one writable root share all but their last components), and takes the
// ones this call finds.
func Resolve(root, p string, plain map[string]bool) (string, error) {
	parts := strings.Split(filepath.Clean(p), "/")
	cur := "/"
	for hops := 0; len(parts) > 0; {
		c := parts[0]
		parts = parts[1:]
		switch c {
		case "", ".":
			continue
		case "..":
			cur = filepath.Dir(cur)
			continue
		}
		next := filepath.Join(cur, c)
		if plain[next] {
			cur = next
			continue
		}
		var st unix.Stat_t
		if err := unix.Lstat(root+next, &st); err != nil {
			return "", &os.PathError{Op: "lstat", Path: root + next, Err: err}
		}
		if st.Mode&unix.S_IFMT != unix.S_IFLNK {
			if plain != nil {
				plain[next] = true
			}
			cur = next
			continue
		}
		if hops++; hops > 40 {
			return "", unix.ELOOP
		}
		t, err := os.Readlink(root + next)
		if err != nil {
			return "", err
		}
		if filepath.IsAbs(t) {
			cur = "/"
		}
		parts = append(strings.Split(t, "/"), parts...)
	}
	return cur, nil
}
