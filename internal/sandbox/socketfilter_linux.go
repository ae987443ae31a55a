package sandbox

import (
	"fmt"
	"runtime"
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"
)

// applySocketFilter is the landlock tier's socket lock, a seccomp filter
// stacked on the deny-list and loaded in every run of the tier, with the
// network on or off: socket(2) works only for the families
// socketFamilies allows. Without the network every family is refused
// (Landlock's TCP rules do not cover UDP, raw or netlink sockets). Below
// Landlock ABI 9 AF_UNIX is refused too, with the network on as well:
// only from ABI 9 does Landlock keep connect(2) away from the host's
// pathname unix sockets (a terminal multiplexer's, a container
// runtime's, a session bus, an editor's), and a network namespace, which
// the tier lacks, would not either. socketpair(2), which pipes between a
// command's own processes use, still works. A run that reaches only a
// proxy (netProxy) gets TCP sockets of AF_INET besides: Landlock lets
// them connect to the proxy's port only (tierRuleset), and UDP (DNS),
// raw, netlink and IPv6 sockets stay refused.
func applySocketFilter(mode netMode) (Mechanism, error) {
	info, ok := syscallTable(runtime.GOARCH)
	if !ok {
		return Mechanism{}, fmt.Errorf("socket filter: no syscall table for %s", runtime.GOARCH)
	}
	network := mode == netAll
	prog, err := socketFilterProg(info, socketFamilies(network, unixSocketsConfined()))
	if mode == netProxy {
		prog, err = socketFilterTCPProg(info, socketFamilies(false, unixSocketsConfined()))
	}
	if err != nil {
		return Mechanism{}, err
	}
	fprog := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	if err := unix.Prctl(unix.PR_SET_SECCOMP, unix.SECCOMP_MODE_FILTER, uintptr(unsafe.Pointer(&fprog)), 0, 0); err != nil {
		return Mechanism{}, fmt.Errorf("load socket filter: %w", err)
	}
	detail := socketFilterDetail(network, landlockABI())
	if mode == netProxy {
		detail = "TCP over AF_INET besides (Landlock lets it connect to the proxy's port only); " + detail
	}
	return Mechanism{"socket-filter", StateApplied, detail}, nil
}

// socketFamily is one address family socket(2) may create.
type socketFamily struct {
	name string
	af   uint32
}

// socketFamilies are the families the landlock tier lets socket(2)
// create: with the network the internet ones and netlink (interface and
// route lookups, as getaddrinfo makes), and AF_UNIX where Landlock
// confines connect(2) to pathname sockets (unixConfined: ABI 9). Every
// other family is refused.
func socketFamilies(network, unixConfined bool) []socketFamily {
	var fams []socketFamily
	if network {
		fams = append(fams, socketFamily{"AF_INET", unix.AF_INET}, socketFamily{"AF_INET6", unix.AF_INET6}, socketFamily{"AF_NETLINK", unix.AF_NETLINK})
	}
	if unixConfined {
		fams = append(fams, socketFamily{"AF_UNIX", unix.AF_UNIX})
	}
	return fams
}

// socketFilterProg is the filter's program: on the native architecture,
// socket(2) with a family other than fams fails with EACCES; every other
// call is left to the deny-list.
func socketFilterProg(info *sysTable, fams []socketFamily) ([]unix.SockFilter, error) {
	nr, ok := info.nr["socket"]
	if !ok {
		return nil, fmt.Errorf("socket filter: no socket(2) on %s", info.name)
	}
	deny := unix.SECCOMP_RET_ERRNO | uint32(unix.EACCES)
	// The allowing return is the last instruction: 5 before the family
	// tests, then one per family and the denying return.
	allowAt := 5 + len(fams) + 1
	toAllow := func(pc int) uint8 { return uint8(allowAt - pc - 1) }
	prog := []unix.SockFilter{
		bpfLoad(offArch),
		bpfJump(unix.BPF_JEQ, info.audit, 0, toAllow(1)),
		bpfLoad(offNr),
		bpfJump(unix.BPF_JEQ, nr, 0, toAllow(3)),
		bpfLoad(argLowOffset(0)),
	}
	for _, f := range fams {
		prog = append(prog, bpfJump(unix.BPF_JEQ, f.af, toAllow(len(prog)), 0))
	}
	return append(prog, bpfRet(deny), bpfRet(retAllow)), nil
}

// socketFilterTCPProg is socketFilterProg's program for a run that
// reaches only the proxy: socket(2) of AF_INET works only with the type
// SOCK_STREAM (SOCK_NONBLOCK and SOCK_CLOEXEC aside) and the protocol 0
// or IPPROTO_TCP, so no UDP, raw, SCTP or MPTCP socket; the families of
// fams work whole; everything else fails with EACCES. So does a send
// with MSG_FASTOPEN (sendto, sendmsg, sendmmsg): TCP Fast Open connects
// without connect(2), and Landlock's TCP rule does not see it.
func socketFilterTCPProg(info *sysTable, fams []socketFamily) ([]unix.SockFilter, error) {
	nrs := map[string]uint32{}
	for _, name := range []string{"socket", "sendto", "sendmsg", "sendmmsg"} {
		nr, ok := info.nr[name]
		if !ok {
			return nil, fmt.Errorf("socket filter: no %s(2) on %s", name, info.name)
		}
		nrs[name] = nr
	}
	deny := unix.SECCOMP_RET_ERRNO | uint32(unix.EACCES)
	// 23 instructions before the families, then one per family, the
	// denying return and the allowing one.
	const protoAt, famsAt = 20, 23
	denyAt := famsAt + len(fams)
	allowAt := denyAt + 1
	to := func(at, pc int) uint8 { return uint8(at - pc - 1) }
	const nb, ce = unix.SOCK_NONBLOCK, unix.SOCK_CLOEXEC
	prog := []unix.SockFilter{
		bpfLoad(offArch),
		bpfJump(unix.BPF_JEQ, info.audit, 0, to(allowAt, 1)),
		bpfLoad(offNr),
		// The sends' flags: sendto's and sendmmsg's fourth argument,
		// sendmsg's third.
		bpfJump(unix.BPF_JEQ, nrs["sendto"], 0, 2),
		bpfLoad(argLowOffset(3)),
		bpfJump(unix.BPF_JSET, unix.MSG_FASTOPEN, to(denyAt, 5), to(allowAt, 5)),
		bpfJump(unix.BPF_JEQ, nrs["sendmsg"], 0, 2),
		bpfLoad(argLowOffset(2)),
		bpfJump(unix.BPF_JSET, unix.MSG_FASTOPEN, to(denyAt, 8), to(allowAt, 8)),
		bpfJump(unix.BPF_JEQ, nrs["sendmmsg"], 0, 2),
		bpfLoad(argLowOffset(3)),
		bpfJump(unix.BPF_JSET, unix.MSG_FASTOPEN, to(denyAt, 11), to(allowAt, 11)),
		bpfJump(unix.BPF_JEQ, nrs["socket"], 0, to(allowAt, 12)),
		bpfLoad(argLowOffset(0)),
		bpfJump(unix.BPF_JEQ, unix.AF_INET, 0, to(famsAt, 14)),
		// The type: SOCK_STREAM with or without the two flags (any
		// other bit is EINVAL to the kernel anyway).
		bpfLoad(argLowOffset(1)),
		bpfJump(unix.BPF_JEQ, unix.SOCK_STREAM, to(protoAt, 16), 0),
		bpfJump(unix.BPF_JEQ, unix.SOCK_STREAM|nb, to(protoAt, 17), 0),
		bpfJump(unix.BPF_JEQ, unix.SOCK_STREAM|ce, to(protoAt, 18), 0),
		bpfJump(unix.BPF_JEQ, unix.SOCK_STREAM|nb|ce, 0, to(denyAt, 19)),
		bpfLoad(argLowOffset(2)),
		bpfJump(unix.BPF_JEQ, 0, to(allowAt, 21), 0),
		bpfJump(unix.BPF_JEQ, unix.IPPROTO_TCP, to(allowAt, 22), to(denyAt, 22)),
	}
	for _, f := range fams {
		prog = append(prog, bpfJump(unix.BPF_JEQ, f.af, to(allowAt, len(prog)), 0))
	}
	return append(prog, bpfRet(deny), bpfRet(retAllow)), nil
}

// socketFilterDetail says what the filter lets through and why.
func socketFilterDetail(network bool, abi int) string {
	var names []string
	for _, f := range socketFamilies(network, abi >= 9) {
		names = append(names, f.name)
	}
	allowed := "socket(2) refused for every family"
	if len(names) > 0 {
		allowed = "socket(2) only for " + strings.Join(names, ", ")
	}
	if abi >= 9 {
		return allowed + "; Landlock refuses connect(2) to unix sockets outside the sandbox"
	}
	return fmt.Sprintf("%s; AF_UNIX refused, the network on or off: Landlock ABI %d cannot keep connect(2) away from the host's unix sockets (needs 9); socketpair(2) works", allowed, abi)
}
