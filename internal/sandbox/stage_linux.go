package sandbox

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// whiteout marks a deleted path in the change directory the way overlayfs
// reads it: a character device 0/0. The kernel lets any user create this
// one device (since Linux 5.8).
func whiteout(p string) error {
	return unix.Mknod(p, unix.S_IFCHR, 0)
}

// cloneFile makes dst share src's blocks (FICLONE) where the filesystem
// supports reflinks.
func cloneFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	fi, err := in.Stat()
	if err != nil {
		return err
	}
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, fi.Mode().Perm())
	if err != nil {
		return err
	}
	err = unix.IoctlFileClone(int(out.Fd()), int(in.Fd()))
	cerr := out.Close()
	if err != nil {
		_ = os.Remove(dst)
		if errors.Is(err, unix.EOPNOTSUPP) || errors.Is(err, unix.EXDEV) || errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOTTY) {
			return errors.ErrUnsupported
		}
		return err
	}
	return cerr
}
