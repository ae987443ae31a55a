//go:build !linux && !darwin

package sandbox

import (
	"errors"
	"os"
)

// whiteout writes an empty placeholder: views here are copies, which apply
// deletions from the change list.
func whiteout(p string) error {
	f, err := os.OpenFile(p, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	return f.Close()
}

// cloneFile has no portable implementation here; copies fall back to
// reading and writing.
func cloneFile(src, dst string) error { return errors.ErrUnsupported }
