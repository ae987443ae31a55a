package sandbox

import (
	"fmt"
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
)

// applySocketFilter is the landlock tier's network lock when the network
// is off, a seccomp filter stacked on the deny-list. It refuses socket(2)
// for every family but AF_UNIX (Landlock's TCP rules do not cover UDP,
// raw or netlink sockets), and below Landlock ABI 9 for AF_UNIX too: only
// from ABI 9 does Landlock keep connect(2) away from the host's pathname
// unix sockets (a container runtime's, a session bus, an agent's).
// socketpair(2), which pipes between a command's own processes use, still
// works.
func applySocketFilter() (Mechanism, error) {
	info, ok := syscallTable(runtime.GOARCH)
	if !ok {
		return Mechanism{}, fmt.Errorf("socket filter: no syscall table for %s", runtime.GOARCH)
	}
	nr, ok := info.nr["socket"]
	if !ok {
		return Mechanism{}, fmt.Errorf("socket filter: no socket(2) on %s", info.name)
	}
	const (
		offNr, offArch, offArg0 = 0, 4, 16
	)
	arg0 := uint32(offArg0)
	if !nativeLittleEndian() {
		arg0 += 4 // the low word of a 64-bit argument
	}
	deny := unix.SECCOMP_RET_ERRNO | uint32(unix.EACCES)
	allowUnix := unixSocketsConfined()
	prog := []unix.SockFilter{
		{Code: unix.BPF_LD | unix.BPF_W | unix.BPF_ABS, K: offArch},
		{Code: unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K, K: info.audit, Jt: 0, Jf: 5},
		{Code: unix.BPF_LD | unix.BPF_W | unix.BPF_ABS, K: offNr},
		{Code: unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K, K: nr, Jt: 0, Jf: 3},
		{Code: unix.BPF_LD | unix.BPF_W | unix.BPF_ABS, K: arg0},
		{Code: unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K, K: unix.AF_UNIX, Jt: 1, Jf: 0},
		{Code: unix.BPF_RET | unix.BPF_K, K: deny},
		{Code: unix.BPF_RET | unix.BPF_K, K: unix.SECCOMP_RET_ALLOW},
	}
	if !allowUnix {
		prog[5] = unix.SockFilter{Code: unix.BPF_JMP | unix.BPF_JA, K: 0} // every family
	}
	fprog := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	if err := unix.Prctl(unix.PR_SET_SECCOMP, unix.SECCOMP_MODE_FILTER, uintptr(unsafe.Pointer(&fprog)), 0, 0); err != nil {
		return Mechanism{}, fmt.Errorf("load socket filter: %w", err)
	}
	if allowUnix {
		return Mechanism{"socket-filter", StateApplied, "sockets other than AF_UNIX refused; Landlock refuses connect(2) to unix sockets outside the sandbox"}, nil
	}
	return Mechanism{"socket-filter", StateApplied, fmt.Sprintf("socket(2) refused for every family: Landlock ABI %d cannot keep connect(2) away from the host's unix sockets (needs 9); socketpair(2) works", landlockABI())}, nil
}

// nativeLittleEndian reports the byte order seccomp_data uses here.
func nativeLittleEndian() bool {
	x := uint16(1)
	return *(*byte)(unsafe.Pointer(&x)) == 1
}
