package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/ioh-lsp/ioh-lsp/internal/sandbox/internal/seccomp"

	"github.com/ioh-lsp/ioh-lsp/internal/sandbox/internal/view"
)

// Landlock has no access right for a file's mode, owner, times or
// extended attributes: a command in the landlock tier could chmod,
// touch -d or setfattr any file its uid owns, anywhere it can name it
// (for a root caller, every root-owned file of the machine), and the
// protected directories of its writable roots too (.git/hooks). The
// runner thread therefore stacks one more seccomp filter before it forks
// the command: every call that changes such metadata becomes a user
// notification, and a supervisor in the runner, outside the Landlock
// domain, does the call itself when it lands inside the writable roots.
//
// The supervisor resolves the target as the kernel would for the caller
// (its working directory and descriptors through /proc/PID, the call's
// AT_ flags), opens it O_PATH, judges where that descriptor really is
// (metaAllowed, on the descriptor's own path), and does the call on that
// same descriptor: there is no second lookup by name, so nothing the
// command swaps in between is acted on. The call never continues in the
// command. The supervisor's thread holds no capability (a root runner's
// caps would otherwise let it change what the command could not): the
// kernel judges ownership and permission with the command's own
// identity. Anything it cannot read or judge is refused with EPERM.

// metaOp is what a metadata call does.
type metaOp int

const (
	opChmod metaOp = iota
	opChown
	opTimes // utimensat's timespec[2]
	opUtime // utime's utimbuf
	opTimeval
	opSetxattr
	opRemovexattr
	opIoctl // the flags ioctls of metaIoctls
)

// metaCall is how one syscall names its target and its arguments (the
// indexes of its arguments; -1 where it has none).
type metaCall struct {
	name     string
	op       metaOp
	dirfd    int  // the directory a relative path starts from; -1: the working directory
	path     int  // the path; -1 for a call on a descriptor
	fd       int  // the descriptor of a call on one
	flags    int  // AT_SYMLINK_NOFOLLOW / AT_EMPTY_PATH
	nofollow bool // the l* calls
	args     [3]int
}

// metaCalls are the x86_64 calls the filter hands to the supervisor.
var metaCalls = map[uint32]metaCall{
	90:  {name: "chmod", op: opChmod, dirfd: -1, path: 0, fd: -1, flags: -1, args: [3]int{1}},
	91:  {name: "fchmod", op: opChmod, dirfd: -1, path: -1, fd: 0, flags: -1, args: [3]int{1}},
	268: {name: "fchmodat", op: opChmod, dirfd: 0, path: 1, fd: -1, flags: -1, args: [3]int{2}},
	452: {name: "fchmodat2", op: opChmod, dirfd: 0, path: 1, fd: -1, flags: 3, args: [3]int{2}},
	92:  {name: "chown", op: opChown, dirfd: -1, path: 0, fd: -1, flags: -1, args: [3]int{1, 2}},
	93:  {name: "fchown", op: opChown, dirfd: -1, path: -1, fd: 0, flags: -1, args: [3]int{1, 2}},
	94:  {name: "lchown", op: opChown, dirfd: -1, path: 0, fd: -1, flags: -1, nofollow: true, args: [3]int{1, 2}},
	260: {name: "fchownat", op: opChown, dirfd: 0, path: 1, fd: -1, flags: 4, args: [3]int{2, 3}},
	132: {name: "utime", op: opUtime, dirfd: -1, path: 0, fd: -1, flags: -1, args: [3]int{1}},
	235: {name: "utimes", op: opTimeval, dirfd: -1, path: 0, fd: -1, flags: -1, args: [3]int{1}},
	261: {name: "futimesat", op: opTimeval, dirfd: 0, path: 1, fd: -1, flags: -1, args: [3]int{2}},
	280: {name: "utimensat", op: opTimes, dirfd: 0, path: 1, fd: -1, flags: 3, args: [3]int{2}},
	188: {name: "setxattr", op: opSetxattr, dirfd: -1, path: 0, fd: -1, flags: -1, args: [3]int{1, 2, 3}},
	189: {name: "lsetxattr", op: opSetxattr, dirfd: -1, path: 0, fd: -1, flags: -1, nofollow: true, args: [3]int{1, 2, 3}},
	190: {name: "fsetxattr", op: opSetxattr, dirfd: -1, path: -1, fd: 0, flags: -1, args: [3]int{1, 2, 3}},
	197: {name: "removexattr", op: opRemovexattr, dirfd: -1, path: 0, fd: -1, flags: -1, args: [3]int{1}},
	198: {name: "lremovexattr", op: opRemovexattr, dirfd: -1, path: 0, fd: -1, flags: -1, nofollow: true, args: [3]int{1}},
	199: {name: "fremovexattr", op: opRemovexattr, dirfd: -1, path: -1, fd: 0, flags: -1, args: [3]int{1}},
	// setxattrat(dirfd, path, at_flags, name, struct xattr_args *, size)
	463: {name: "setxattrat", op: opSetxattr, dirfd: 0, path: 1, fd: -1, flags: 2, args: [3]int{3, 4, 5}},
	466: {name: "removexattrat", op: opRemovexattr, dirfd: 0, path: 1, fd: -1, flags: 2, args: [3]int{3}},
}

// metaNames lists the supervised calls for reports.
const metaNames = "chmod, chown, utime(s), the xattr calls (each with its f, l and at forms) and the attribute-flag ioctls"

// seccompNotif and seccompNotifResp are the kernel's struct seccomp_notif
// and struct seccomp_notif_resp.
type seccompNotif struct {
	id    uint64
	pid   uint32
	flags uint32
	nr    int32
	arch  uint32
	ip    uint64
	args  [6]uint64
}

type seccompNotifResp struct {
	id    uint64
	val   int64
	error int32
	flags uint32
}

// The ioctls that change a file's attribute flags (chattr: nodump,
// noatime, …) and its fsxattr (project id, extent size hints): the
// supervisor serves them on the caller's descriptor as the other calls.
const (
	ioctlSetFlags   = 0x40086602 // FS_IOC_SETFLAGS
	ioctlSetFlags32 = 0x40046602 // FS_IOC32_SETFLAGS
	ioctlFsSetXattr = 0x401c5820 // FS_IOC_FSSETXATTR
	sysIoctl        = 16
)

// metaIoctls are those commands and the size of the argument each
// points to.
var metaIoctls = map[uint32]int{ioctlSetFlags: 4, ioctlSetFlags32: 4, ioctlFsSetXattr: 28}

// metaFilter is the notifying filter: native calls named in metaCalls
// and the ioctls of metaIoctls go to the listener, everything else is
// allowed (the deny-list stacked before it judges the rest, and its
// EPERM wins over a notification).
// With connect, connect(2) goes to the listener too (a run restricted to
// the proxy: tier_landlock_connect_linux.go).
func metaFilter(connect bool) []unix.SockFilter {
	return metaProg(unix.SECCOMP_RET_USER_NOTIF, connect)
}

// metaRefuseFilter refuses the same calls with EPERM: for a command no
// supervisor serves.
func metaRefuseFilter() []unix.SockFilter {
	return metaProg(seccomp.RetErrno|uint32(unix.EPERM), false)
}

// metaProg returns ret for the supervised calls (connect(2) among them
// with connect), allows the rest.
func metaProg(ret uint32, connect bool) []unix.SockFilter {
	prog := []unix.SockFilter{
		seccomp.LoadWord(seccomp.OffArch),
		seccomp.Jump(unix.BPF_JEQ, unix.AUDIT_ARCH_X86_64, 1, 0),
		seccomp.Ret(seccomp.RetAllow),
		seccomp.LoadWord(seccomp.OffNr),
		// Not ioctl: past its block, to the reload of the number.
		seccomp.Jump(unix.BPF_JEQ, sysIoctl, 0, uint8(len(metaIoctls)+3)),
		seccomp.LoadWord(seccomp.ArgLow(1)),
	}
	// A matching command jumps past the rest of the list and the allow,
	// to the return.
	k := len(metaIoctls)
	i := 0
	for cmd := range metaIoctls {
		prog = append(prog, seccomp.Jump(unix.BPF_JEQ, cmd, uint8(k-i), 0))
		i++
	}
	prog = append(prog, seccomp.Ret(seccomp.RetAllow), seccomp.Ret(ret), seccomp.LoadWord(seccomp.OffNr))
	for nr := range metaCalls {
		prog = append(prog, seccomp.Jump(unix.BPF_JEQ, nr, 0, 1), seccomp.Ret(ret))
	}
	if connect {
		prog = append(prog, seccomp.Jump(unix.BPF_JEQ, sysConnect, 0, 1), seccomp.Ret(ret))
	}
	return append(prog, seccomp.Ret(seccomp.RetAllow))
}

// loadFilter installs prog on the calling thread with flags and returns
// what seccomp(2) returned (the listener, with NEW_LISTENER).
func loadFilter(prog []unix.SockFilter, flags uintptr) (int, error) {
	fprog := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	r, _, e := unix.RawSyscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, flags, uintptr(unsafe.Pointer(&fprog)))
	runtime.KeepAlive(prog)
	if e != 0 {
		return -1, e
	}
	return int(r), nil
}

// metaSupervise loads the notifying filter on the calling thread (the
// runner thread, restricted, no_new_privs set, about to fork the
// command) and starts the supervisor for the writable roots; with a
// proxy port, for connect(2) too.
func metaSupervise(writable []string, port int) (Mechanism, error) {
	if runtime.GOARCH != "amd64" {
		return metaRefuse("no supervisor on " + runtime.GOARCH)
	}
	roots := metaRoots(writable)
	lfd, err := loadFilter(metaFilter(port != 0), unix.SECCOMP_FILTER_FLAG_NEW_LISTENER)
	if err != nil {
		return metaRefuse(fmt.Sprintf("seccomp listener: %v", err))
	}
	go superviseMeta(lfd, roots, port)
	return Mechanism{"metadata-supervisor", StateApplied, metaNames + " are done by the runner outside the sandbox, on the file the call names, only inside the writable roots and the private directory (never their protected directories); elsewhere EPERM" + connectNote(port)}, nil
}

// connectNote is what the supervisor adds for a proxy on port (0: none).
func connectNote(port int) string {
	if port == 0 {
		return ""
	}
	return fmt.Sprintf("; an IPv4 connect(2) only to 127.0.0.1:%d, the proxy, done by the supervisor on the command's socket (Landlock's rule names the port only); elsewhere EACCES", port)
}

// metaRefuse loads the refusing filter instead; why says why there is
// no supervisor.
func metaRefuse(why string) (Mechanism, error) {
	if runtime.GOARCH != "amd64" {
		return Mechanism{"metadata-supervisor", StateUnavailable, why + ": Landlock has no right for chmod, utimes or extended attributes, so files the command's uid owns outside the writable roots can have them changed"}, nil
	}
	if _, err := loadFilter(metaRefuseFilter(), 0); err != nil {
		return Mechanism{}, fmt.Errorf("load metadata filter: %w", err)
	}
	return Mechanism{"metadata-supervisor", StateUnavailable, why + "; " + metaNames + " are refused everywhere (EPERM)"}, nil
}

// metaRoots are the writable roots as the kernel names them now.
func metaRoots(writable []string) []string {
	var roots []string
	for _, w := range writable {
		if r, err := filepath.EvalSymlinks(w); err == nil && filepath.IsAbs(r) {
			roots = append(roots, r)
		}
	}
	return roots
}

// superviseMeta answers the listener's notifications until no process
// uses the filter. Its thread is locked and holds no capability.
func superviseMeta(lfd int, roots []string, port int) {
	runtime.LockOSThread() // never unlocked: the thread drops its capabilities
	defer unix.Close(lfd)
	capsOK := capsetEmpty() == nil
	// The caller waits for each answer: wake this thread on the caller's
	// CPU (Linux 6.6+; harmless where the flag is unknown).
	_, _, _ = unix.Syscall(unix.SYS_IOCTL, uintptr(lfd), unix.SECCOMP_IOCTL_NOTIF_SET_FLAGS, unix.SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP)
	for {
		pfd := []unix.PollFd{{Fd: int32(lfd), Events: unix.POLLIN}}
		if _, err := unix.Poll(pfd, -1); err != nil {
			if errors.Is(err, unix.EINTR) {
				continue
			}
			return
		}
		if pfd[0].Revents&unix.POLLIN == 0 {
			return // POLLHUP: every process of the filter has exited
		}
		var n seccompNotif
		if _, _, e := unix.Syscall(unix.SYS_IOCTL, uintptr(lfd), unix.SECCOMP_IOCTL_NOTIF_RECV, uintptr(unsafe.Pointer(&n))); e != 0 {
			continue // EINTR, or the caller died (ENOENT)
		}
		resp := seccompNotifResp{id: n.id, error: -int32(unix.EPERM)}
		switch {
		case !capsOK:
		case n.nr == sysConnect && n.arch == unix.AUDIT_ARCH_X86_64:
			resp.error, resp.flags = serveConnect(lfd, &n, port) // tier_landlock_connect_linux.go
		default:
			resp.error = -int32(metaServe(lfd, &n, roots))
		}
		_, _, _ = unix.Syscall(unix.SYS_IOCTL, uintptr(lfd), unix.SECCOMP_IOCTL_NOTIF_SEND, uintptr(unsafe.Pointer(&resp)))
	}
}

// metaReq is one decoded call: what it names and what it asks.
type metaReq struct {
	call    metaCall
	pid     int
	dirfd   int
	fd      int
	path    string
	hasPath bool // false: the call acts on dirfd itself (a NULL path)
	flags   int
	mode    uint32
	uid     int
	gid     int
	times   *[2]unix.Timespec
	name    string
	value   []byte
	xflags  int
	cmd     uint32 // opIoctl's command; its argument is in value
}

// metaServe decodes, resolves, judges and does one call, returning its
// errno (0 for success).
func metaServe(lfd int, n *seccompNotif, roots []string) unix.Errno {
	c, ok := metaCalls[uint32(n.nr)]
	if n.nr == sysIoctl {
		c, ok = metaCall{name: "ioctl", op: opIoctl, dirfd: -1, path: -1, fd: 0, flags: -1, args: [3]int{1, 2}}, true
	}
	if !ok || n.arch != unix.AUDIT_ARCH_X86_64 {
		return unix.EPERM
	}
	r, errno := decodeMeta(c, n)
	if errno != 0 {
		return errno
	}
	fd, errno := r.resolve(func() bool { return notifValid(lfd, n.id) })
	if errno != 0 {
		return errno
	}
	defer unix.Close(fd)
	if !metaAllowed(fd, roots) {
		return unix.EPERM
	}
	return r.do(fd)
}

// notifValid reports whether the notification is still pending: its
// caller has not died (so its pid names it still).
func notifValid(lfd int, id uint64) bool {
	_, _, e := unix.Syscall(unix.SYS_IOCTL, uintptr(lfd), unix.SECCOMP_IOCTL_NOTIF_ID_VALID, uintptr(unsafe.Pointer(&id)))
	return e == 0
}

// resolve opens the call's target O_PATH as the kernel would find it for
// the caller. valid is asked once the caller's /proc entries are open:
// if the caller has died since, its pid may name another process.
func (r *metaReq) resolve(valid func() bool) (int, unix.Errno) {
	proc := "/proc/" + strconv.Itoa(r.pid)
	if !r.hasPath {
		// The kernel takes no O_PATH descriptor for these calls.
		if oPath, ok := fdIsPath(proc, r.fd); !ok || oPath {
			return -1, unix.EBADF
		}
		fd, err := unix.Open(proc+"/fd/"+strconv.Itoa(r.fd), unix.O_PATH|unix.O_CLOEXEC, 0)
		if err != nil {
			return -1, unix.EBADF
		}
		if !valid() {
			unix.Close(fd)
			return -1, unix.EPERM
		}
		return fd, 0
	}
	base := proc + "/cwd"
	if r.dirfd != unix.AT_FDCWD {
		base = proc + "/fd/" + strconv.Itoa(r.dirfd)
	}
	var bfd int
	if r.path == "" || !filepath.IsAbs(r.path) {
		var err error
		if bfd, err = unix.Open(base, unix.O_PATH|unix.O_CLOEXEC, 0); err != nil {
			return -1, unix.EBADF
		}
		defer unix.Close(bfd)
	} else {
		bfd = unix.AT_FDCWD // the caller cannot chroot: its root is ours
	}
	if !valid() {
		return -1, unix.EPERM
	}
	if r.path == "" {
		if r.flags&unix.AT_EMPTY_PATH == 0 {
			return -1, unix.ENOENT
		}
		// The descriptor (or working directory) itself.
		fd, err := unix.FcntlInt(uintptr(bfd), unix.F_DUPFD_CLOEXEC, 0)
		if err != nil {
			return -1, errnoOf(err)
		}
		return fd, 0
	}
	var st unix.Stat_t
	if r.dirfd != unix.AT_FDCWD && !filepath.IsAbs(r.path) && (unix.Fstat(bfd, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFDIR) {
		return -1, unix.ENOTDIR
	}
	flags := unix.O_PATH | unix.O_CLOEXEC
	if r.flags&unix.AT_SYMLINK_NOFOLLOW != 0 {
		flags |= unix.O_NOFOLLOW
	}
	fd, err := unix.Openat(bfd, r.path, flags, 0)
	if err != nil {
		return -1, errnoOf(err)
	}
	return fd, 0
}

// fdIsPath reports whether the caller's descriptor fd was opened
// O_PATH, from its fdinfo; false for ok when it has no such descriptor.
func fdIsPath(proc string, fd int) (oPath, ok bool) {
	b, err := os.ReadFile(proc + "/fdinfo/" + strconv.Itoa(fd))
	if err != nil {
		return false, false
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, found := strings.CutPrefix(line, "flags:"); found {
			flags, err := strconv.ParseUint(strings.TrimSpace(v), 8, 64)
			return err == nil && flags&unix.O_PATH != 0, err == nil
		}
	}
	return false, false
}

// metaAllowed is the one judgement of where an opened target lies: the
// path the kernel gives its descriptor, under a writable root (the
// roots are carved around the protected directories, as the Landlock
// rules are). A deleted file, or one the kernel names otherwise than
// by an absolute path (a pipe, a socket), is refused.
func metaAllowed(fd int, roots []string) bool {
	p, err := os.Readlink("/proc/self/fd/" + strconv.Itoa(fd))
	if err != nil || !filepath.IsAbs(p) || strings.HasSuffix(p, " (deleted)") || filepath.Clean(p) != p {
		return false
	}
	for _, root := range roots {
		if view.Under(p, root) {
			return true
		}
	}
	return false
}

// do performs the call on the descriptor fd, which metaAllowed judged.
func (r *metaReq) do(fd int) unix.Errno {
	self := "/proc/self/fd/" + strconv.Itoa(fd)
	var err error
	switch r.call.op {
	case opChmod:
		err = fchmodatEmpty(fd, self, r.mode)
	case opChown:
		err = unix.Fchownat(fd, "", r.uid, r.gid, unix.AT_EMPTY_PATH)
	case opTimes, opUtime, opTimeval:
		var tp uintptr
		if r.times != nil {
			tp = uintptr(unsafe.Pointer(r.times))
		}
		empty := [1]byte{}
		_, _, e := unix.Syscall6(unix.SYS_UTIMENSAT, uintptr(fd), uintptr(unsafe.Pointer(&empty[0])), tp, unix.AT_EMPTY_PATH, 0, 0)
		if e == unix.EINVAL || e == unix.ENOENT {
			// An older kernel takes no AT_EMPTY_PATH here: through
			// the descriptor's /proc link instead (a bad time is EINVAL
			// there too).
			p, perr := unix.BytePtrFromString(self)
			if perr != nil {
				return unix.EPERM
			}
			cwd := unix.AT_FDCWD
			_, _, e = unix.Syscall6(unix.SYS_UTIMENSAT, uintptr(cwd), uintptr(unsafe.Pointer(p)), tp, 0, 0, 0)
		}
		runtime.KeepAlive(r.times)
		if e != 0 {
			err = e
		}
	case opSetxattr:
		// Through the descriptor's /proc link, which lands on its inode
		// itself (a symlink's own, for the l* calls) with no lookup.
		err = unix.Setxattr(self, r.name, r.value, r.xflags)
	case opRemovexattr:
		err = unix.Removexattr(self, r.name)
	case opIoctl:
		err = r.ioctl(fd, self)
	default:
		return unix.EPERM
	}
	return errnoOf(err)
}

// ioctl does a flags ioctl on the file fd holds, which needs a
// descriptor of its own: a regular file or directory is opened again for
// reading through fd's /proc link (the same inode, no lookup).
func (r *metaReq) ioctl(fd int, self string) error {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return err
	}
	if t := st.Mode & unix.S_IFMT; t != unix.S_IFREG && t != unix.S_IFDIR {
		return unix.ENOTTY
	}
	rfd, err := unix.Open(self, unix.O_RDONLY|unix.O_NONBLOCK|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(rfd)
	_, _, e := unix.Syscall(unix.SYS_IOCTL, uintptr(rfd), uintptr(r.cmd), uintptr(unsafe.Pointer(&r.value[0])))
	runtime.KeepAlive(r.value)
	if e != 0 {
		return e
	}
	return nil
}

// fchmodatEmpty changes the mode of the file fd holds: fchmodat2 with
// AT_EMPTY_PATH (Linux 6.6), else through its /proc link.
func fchmodatEmpty(fd int, self string, mode uint32) error {
	empty := [1]byte{}
	_, _, e := unix.Syscall6(unix.SYS_FCHMODAT2, uintptr(fd), uintptr(unsafe.Pointer(&empty[0])), uintptr(mode), unix.AT_EMPTY_PATH, 0, 0)
	if e == unix.ENOSYS {
		return unix.Fchmodat(unix.AT_FDCWD, self, mode, 0)
	}
	if e != 0 {
		return e
	}
	return nil
}

// errnoOf is err's errno, EPERM for anything else, 0 for nil.
func errnoOf(err error) unix.Errno {
	if err == nil {
		return 0
	}
	var e unix.Errno
	if errors.As(err, &e) {
		return e
	}
	return unix.EPERM
}

// metaHandFd is the exec stage's descriptor of the socket to its runner,
// over which it hands the runner its listener (startExecStage).
const metaHandFd = 5

// metaHandOff is metaSupervise for the exec stage, which execs the
// command and so cannot serve the listener itself: it loads the
// notifying filter and sends the listener to the runner, whose
// supervisor (metaReceive) serves it; its own copy closes here. If the
// listener cannot be sent, the run fails: the calls would have no one
// to answer them.
func metaHandOff(port int) (Mechanism, error) {
	if runtime.GOARCH != "amd64" {
		return metaRefuse("no supervisor on " + runtime.GOARCH)
	}
	lfd, err := loadFilter(metaFilter(port != 0), unix.SECCOMP_FILTER_FLAG_NEW_LISTENER)
	if err != nil {
		return metaRefuse(fmt.Sprintf("seccomp listener: %v", err))
	}
	defer unix.Close(lfd)
	defer unix.Close(metaHandFd)
	if err := unix.Sendmsg(metaHandFd, []byte{1}, unix.UnixRights(lfd), nil, 0); err != nil {
		return Mechanism{}, fmt.Errorf("hand the metadata listener to the runner: %w", err)
	}
	return Mechanism{"metadata-supervisor", StateApplied, metaNames + " are done by the runner outside the sandbox (the exec stage handed it its listener), on the file the call names, only inside the writable roots and the private directory (never their protected directories); elsewhere EPERM" + connectNote(port)}, nil
}

// metaReceive is the runner's end of metaHandOff: it waits for the
// exec stage's listener on sock and serves it. It returns when the
// stage closed its end without sending one.
func metaReceive(sock *os.File, writable []string, port int) {
	defer sock.Close()
	roots := metaRoots(writable)
	buf, oob := make([]byte, 1), make([]byte, unix.CmsgSpace(4))
	for {
		_, oobn, _, _, err := unix.Recvmsg(int(sock.Fd()), buf, oob, unix.MSG_CMSG_CLOEXEC)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil || oobn == 0 {
			return
		}
		msgs, err := unix.ParseSocketControlMessage(oob[:oobn])
		if err != nil || len(msgs) != 1 {
			return
		}
		fds, err := unix.ParseUnixRights(&msgs[0])
		if err != nil || len(fds) != 1 {
			for _, fd := range fds {
				unix.Close(fd)
			}
			return
		}
		superviseMeta(fds[0], roots, port)
		return
	}
}
