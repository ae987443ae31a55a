//go:build !(linux || darwin)

package workspace

import "os"

// statStamp is what says a file changed: size and modification time (no
// change time or inode here).
func statStamp(abs string) (fileStamp, bool) {
	fi, err := os.Lstat(abs)
	if err != nil || !fi.Mode().IsRegular() {
		return fileStamp{}, false
	}
	return fileStamp{size: fi.Size(), mtime: fi.ModTime().UnixNano(), ctime: fi.ModTime().UnixNano()}, true
}
