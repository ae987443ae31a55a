//go:build !(linux || darwin)

package workspace

import (
	"io"
	"os"
)

// statStamp is what says a file changed: size and modification time (no
// change time or inode here).
func statStamp(abs string) (fileStamp, bool) {
	fi, err := os.Lstat(abs)
	if err != nil || !fi.Mode().IsRegular() {
		return fileStamp{}, false
	}
	return fileStamp{size: fi.Size(), mtime: fi.ModTime().UnixNano(), ctime: fi.ModTime().UnixNano()}, true
}

// mapFile reads the index file into memory.
func mapFile(f *os.File, size int) ([]byte, func() error, error) {
	b := make([]byte, size)
	if _, err := io.ReadFull(f, b); err != nil {
		return nil, nil, err
	}
	return b, func() error { return nil }, nil
}
