//go:build unix

package workspace

import (
	"errors"
	"syscall"
)

// rawFile reads a file with raw syscalls (open, read, close): os.File's
// poller registration, fstat and finalizer cost more than the read itself
// on the small files most searches visit.
type rawFile struct{ fd int }

func openRaw(abs string) (rawFile, error) {
	for {
		fd, err := syscall.Open(abs, syscall.O_RDONLY|syscall.O_CLOEXEC|syscall.O_NOFOLLOW, 0)
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		return rawFile{fd}, err
	}
}

// read fills p from the file. A short read of a regular file means end of
// file, so eof is reported with the data, which saves the extra read most
// files would need to see it.
func (f rawFile) read(p []byte) (n int, eof bool, err error) {
	for {
		n, err = syscall.Read(f.fd, p)
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if err != nil {
			return 0, false, err
		}
		return n, n < len(p), nil
	}
}

func (f rawFile) close() { syscall.Close(f.fd) }
