//go:build linux || darwin

package workspace

import (
	"syscall"

	"golang.org/x/sys/unix"
)

// statStamp is what says a file changed: size, modification and change
// times and inode. The change time cannot be set from user space, so an
// edit that restores the modification time is still seen.
func statStamp(abs string) (fileStamp, bool) {
	var st unix.Stat_t
	for {
		err := unix.Lstat(abs, &st)
		if err == syscall.EINTR {
			continue
		}
		if err != nil || st.Mode&unix.S_IFMT != unix.S_IFREG {
			return fileStamp{}, false
		}
		return fileStamp{size: st.Size, mtime: st.Mtim.Nano(), ctime: st.Ctim.Nano(), ino: uint64(st.Ino)}, true
	}
}
