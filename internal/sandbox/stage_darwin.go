package sandbox

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// whiteout is not needed where the view is a copy: the copy applies
// deletions from the change list. An empty placeholder keeps the change
// directory's shape.
func whiteout(p string) error {
	f, err := os.OpenFile(p, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	return f.Close()
}

// cloneFile uses APFS clonefile(2).
func cloneFile(src, dst string) error {
	err := unix.Clonefile(src, dst, unix.CLONE_NOFOLLOW)
	if errors.Is(err, unix.ENOTSUP) || errors.Is(err, unix.EXDEV) {
		return errors.ErrUnsupported
	}
	return err
}
