package sandbox

import (
	"github.com/ioh-lsp/ioh-lsp/internal/sandbox/internal/seccomp"

	"os"
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The supervised calls' arguments (tier_landlock_meta_linux.go), read
// from the notification and, where they are pointers, from the caller's
// memory. Everything is read once, before the target is resolved: the
// supervisor acts on these copies only.

// decodeMeta reads the call's arguments, from the caller's memory where
// they are pointers.
func decodeMeta(c metaCall, n *seccompNotif) (*metaReq, unix.Errno) {
	r := &metaReq{call: c, pid: int(n.pid), dirfd: unix.AT_FDCWD, fd: -1, hasPath: true}
	a := n.args
	if c.dirfd >= 0 {
		r.dirfd = int(int32(a[c.dirfd]))
	}
	if c.fd >= 0 {
		r.fd = int(int32(a[c.fd]))
		r.hasPath = false
	}
	if c.flags >= 0 {
		r.flags = int(int32(a[c.flags]))
	}
	allowed := unix.AT_SYMLINK_NOFOLLOW | unix.AT_EMPTY_PATH
	if c.flags >= 0 && r.flags&^allowed != 0 {
		return nil, unix.EINVAL
	}
	if c.nofollow {
		r.flags |= unix.AT_SYMLINK_NOFOLLOW
	}
	if c.path >= 0 {
		ptr := uintptr(a[c.path])
		switch {
		case ptr == 0 && (c.name == "utimensat" || c.name == "futimesat"):
			// A NULL path acts on the descriptor itself.
			if r.dirfd == unix.AT_FDCWD {
				return nil, unix.EFAULT
			}
			if c.name == "utimensat" && r.flags != 0 {
				return nil, unix.EINVAL
			}
			r.hasPath = false
			r.fd = r.dirfd
		default:
			s, errno := readString(r.pid, ptr, unix.PathMax)
			if errno != 0 {
				return nil, errno
			}
			r.path = s
		}
	}
	switch c.op {
	case opChmod:
		r.mode = uint32(a[c.args[0]])
		if r.mode&seccomp.SetIDBits != 0 {
			return nil, unix.EPERM // the deny-list refuses these first
		}
	case opChown:
		r.uid, r.gid = int(int32(a[c.args[0]])), int(int32(a[c.args[1]]))
	case opTimes, opUtime, opTimeval:
		if ptr := uintptr(a[c.args[0]]); ptr != 0 {
			ts, errno := readTimes(r.pid, ptr, c.op)
			if errno != 0 {
				return nil, errno
			}
			r.times = ts
		}
	case opIoctl:
		r.cmd = uint32(a[c.args[0]])
		size, ok := metaIoctls[r.cmd]
		if !ok {
			return nil, unix.EPERM
		}
		r.value = make([]byte, size)
		if readMem(r.pid, uintptr(a[c.args[1]]), r.value) != size {
			return nil, unix.EFAULT
		}
	case opSetxattr, opRemovexattr:
		name, errno := readString(r.pid, uintptr(a[c.args[0]]), 256)
		if errno != 0 {
			if errno == unix.ENAMETOOLONG {
				errno = unix.ERANGE
			}
			return nil, errno
		}
		r.name = name
		if c.op == opSetxattr {
			if errno := r.readValue(a, c); errno != 0 {
				return nil, errno
			}
		}
	}
	return r, 0
}

// readValue reads setxattr's value and flags (setxattrat's from its
// struct xattr_args {u64 value; u32 size; u32 flags}).
func (r *metaReq) readValue(a [6]uint64, c metaCall) unix.Errno {
	ptr, size := uintptr(a[c.args[1]]), a[c.args[2]]
	r.xflags = int(int32(a[4]))
	if c.name == "setxattrat" {
		if size != 16 {
			return unix.EINVAL
		}
		var b [16]byte
		if readMem(r.pid, ptr, b[:]) != len(b) {
			return unix.EFAULT
		}
		ptr = uintptr(*(*uint64)(unsafe.Pointer(&b[0])))
		size = uint64(*(*uint32)(unsafe.Pointer(&b[8])))
		r.xflags = int(*(*uint32)(unsafe.Pointer(&b[12])))
	}
	if size > 1<<16 {
		return unix.E2BIG
	}
	r.value = make([]byte, size)
	if size > 0 && readMem(r.pid, ptr, r.value) != len(r.value) {
		return unix.EFAULT
	}
	return 0
}

// readTimes reads the times argument of the utime calls as timespecs.
func readTimes(pid int, ptr uintptr, op metaOp) (*[2]unix.Timespec, unix.Errno) {
	var b [32]byte
	size := 32
	if op == opUtime {
		size = 16
	}
	if readMem(pid, ptr, b[:size]) != size {
		return nil, unix.EFAULT
	}
	w := func(i int) int64 { return *(*int64)(unsafe.Pointer(&b[8*i])) }
	var ts [2]unix.Timespec
	switch op {
	case opUtime: // struct utimbuf {actime, modtime}
		ts[0], ts[1] = unix.Timespec{Sec: w(0)}, unix.Timespec{Sec: w(1)}
	case opTimeval: // struct timeval[2]
		for i := range ts {
			usec := w(2*i + 1)
			if usec < 0 || usec >= 1000000 {
				return nil, unix.EINVAL
			}
			ts[i] = unix.Timespec{Sec: w(2 * i), Nsec: usec * 1000}
		}
	default:
		ts[0], ts[1] = unix.Timespec{Sec: w(0), Nsec: w(1)}, unix.Timespec{Sec: w(2), Nsec: w(3)}
	}
	return &ts, 0
}

// readMem reads the caller's memory at ptr into b, a page at a time, and
// returns how much it read before the first fault.
func readMem(pid int, ptr uintptr, b []byte) int {
	got := 0
	page := uintptr(os.Getpagesize())
	for got < len(b) {
		n := int(page - (ptr+uintptr(got))%page)
		n = min(n, len(b)-got)
		k, err := unix.ProcessVMReadv(pid,
			[]unix.Iovec{{Base: &b[got], Len: uint64(n)}},
			[]unix.RemoteIovec{{Base: ptr + uintptr(got), Len: n}}, 0)
		if err != nil || k <= 0 {
			return got
		}
		got += k
	}
	return got
}

// readString reads a NUL-terminated string of at most max bytes, the
// NUL included.
func readString(pid int, ptr uintptr, max int) (string, unix.Errno) {
	if ptr == 0 {
		return "", unix.EFAULT
	}
	var out []byte
	buf := make([]byte, 256)
	for len(out) < max {
		n := readMem(pid, ptr+uintptr(len(out)), buf[:min(len(buf), max-len(out))])
		if i := strings.IndexByte(string(buf[:n]), 0); i >= 0 {
			return string(append(out, buf[:i]...)), 0
		}
		if n < min(len(buf), max-len(out)) {
			return "", unix.EFAULT
		}
		out = append(out, buf[:n]...)
	}
	return "", unix.ENAMETOOLONG
}
