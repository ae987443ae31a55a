//go:build unix

package workspace

import (
	"errors"
	"slices"
	"syscall"
)

// readPooled reads abs into the pooled buffer *bp, growing it as needed.
// It uses raw syscalls (open, read, close): os.File's poller registration,
// fstat and finalizer cost more than the read itself on small files. A
// short read of a regular file means end of file, which saves the extra
// read most files would need to see EOF.
func readPooled(abs string, bp *[]byte) ([]byte, error) {
	var fd int
	var err error
	for {
		fd, err = syscall.Open(abs, syscall.O_RDONLY|syscall.O_CLOEXEC|syscall.O_NOFOLLOW, 0)
		if !errors.Is(err, syscall.EINTR) {
			break
		}
	}
	if err != nil {
		return nil, err
	}
	defer syscall.Close(fd)
	buf := (*bp)[:0]
	for {
		if len(buf) == cap(buf) {
			buf = slices.Grow(buf, cap(buf)+4096)
		}
		want := cap(buf) - len(buf)
		n, err := syscall.Read(fd, buf[len(buf):cap(buf)])
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if err != nil {
			*bp = buf
			return nil, err
		}
		buf = buf[:len(buf)+n]
		if n == 0 || n < want {
			break
		}
	}
	*bp = buf
	return buf, nil
}
