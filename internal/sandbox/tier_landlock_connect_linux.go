package sandbox

import (
	"encoding/binary"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// Landlock's TCP rules name a port, not an address: a landlock-tier run
// restricted to the proxy (netProxy) could connect to the proxy's port at
// any address. On x86_64 the metadata supervisor therefore also gets the
// command's connect(2) calls in such a run (metaProg). For an IPv4
// socket it reads the address once, and when it is the proxy's
// (127.0.0.1:PORT) connects the command's own socket itself, taken with
// pidfd_getfd(2): what it judged is what it connects to, whatever the
// command writes to its memory meanwhile. Any other address is refused
// with EACCES, as Landlock refuses another port. A socket of another
// family (only AF_UNIX gets past the socket filter, from Landlock ABI 9)
// continues in the kernel, where Landlock judges it.

// sysConnect is connect(2) on x86_64.
const sysConnect = 42

// serveConnect answers one connect notification of a run whose only
// TCP destination is 127.0.0.1:port: the negated errno and the response
// flags.
func serveConnect(lfd int, n *seccompNotif, port int) (int32, uint32) {
	if port == 0 {
		return -int32(unix.EPERM), 0
	}
	pidfd, err := callerPidfd(int(n.pid))
	if err != nil {
		return -int32(unix.EPERM), 0
	}
	defer unix.Close(pidfd)
	if !notifValid(lfd, n.id) { // the pidfd names the caller, not a reused pid
		return -int32(unix.EPERM), 0
	}
	fd, err := unix.PidfdGetfd(pidfd, int(int32(n.args[0])), 0)
	if err != nil {
		return -int32(unix.EBADF), 0
	}
	defer unix.Close(fd)
	dom, err := unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_DOMAIN)
	if err != nil {
		return -int32(unix.ENOTSOCK), 0
	}
	if dom != unix.AF_INET {
		return 0, unix.SECCOMP_USER_NOTIF_FLAG_CONTINUE
	}
	var sa [16]byte
	size := int(min(n.args[2], uint64(len(sa))))
	if size < 8 || readMem(int(n.pid), uintptr(n.args[1]), sa[:size]) < 8 {
		return -int32(unix.EFAULT), 0
	}
	if !proxyAddr(sa[:8], port) {
		return -int32(unix.EACCES), 0
	}
	err = unix.Connect(fd, &unix.SockaddrInet4{Port: port, Addr: [4]byte{127, 0, 0, 1}})
	return -int32(errnoOf(err)), 0 // EINPROGRESS for a non-blocking socket, as the kernel says it
}

// callerPidfd opens a pidfd of the notifying thread tid (PIDFD_THREAD,
// Linux 6.9+: pidfd_getfd then takes the descriptor from that thread's
// own table), else of its thread group, as /proc/TID/status names it.
// The caller checks the notification is still pending after, so tid
// still names the thread that made the call.
func callerPidfd(tid int) (int, error) {
	const pidfdThread = unix.O_EXCL // PIDFD_THREAD
	if fd, err := unix.PidfdOpen(tid, pidfdThread); err == nil {
		return fd, nil
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(tid) + "/status")
	if err != nil {
		return -1, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "Tgid:"); ok {
			tgid, err := strconv.Atoi(strings.TrimSpace(v))
			if err != nil {
				return -1, err
			}
			return unix.PidfdOpen(tgid, 0)
		}
	}
	return -1, unix.ESRCH
}

// proxyAddr reports whether the start of a struct sockaddr_in, as the
// command wrote it, is 127.0.0.1:port.
func proxyAddr(sa []byte, port int) bool {
	return binary.NativeEndian.Uint16(sa[0:2]) == unix.AF_INET &&
		int(binary.BigEndian.Uint16(sa[2:4])) == port &&
		[4]byte(sa[4:8]) == [4]byte{127, 0, 0, 1}
}
