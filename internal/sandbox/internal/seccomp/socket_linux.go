package seccomp

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// Family is one address family socket(2) may create.
type Family struct {
	Name string
	AF   uint32
}

// Families are the families the landlock tier lets socket(2)
// create: with the network the internet ones and netlink (interface and
// route lookups, as getaddrinfo makes), and AF_UNIX where Landlock
// confines connect(2) to pathname sockets (unixConfined: ABI 9). Every
// other family is refused.
func Families(network, unixConfined bool) []Family {
	var fams []Family
	if network {
		fams = append(fams, Family{"AF_INET", unix.AF_INET}, Family{"AF_INET6", unix.AF_INET6}, Family{"AF_NETLINK", unix.AF_NETLINK})
	}
	if unixConfined {
		fams = append(fams, Family{"AF_UNIX", unix.AF_UNIX})
	}
	return fams
}

// SocketProg is the filter's program: on the native architecture,
// socket(2) with a family other than fams fails with EACCES; every other
// call is left to the deny-list.
func SocketProg(info *Table, fams []Family) ([]unix.SockFilter, error) {
	nr, ok := info.Nr["socket"]
	if !ok {
		return nil, fmt.Errorf("socket filter: no socket(2) on %s", info.Name)
	}
	deny := unix.SECCOMP_RET_ERRNO | uint32(unix.EACCES)
	// The allowing return is the last instruction: 5 before the family
	// tests, then one per family and the denying return.
	allowAt := 5 + len(fams) + 1
	toAllow := func(pc int) uint8 { return uint8(allowAt - pc - 1) }
	prog := []unix.SockFilter{
		LoadWord(OffArch),
		Jump(unix.BPF_JEQ, info.Audit, 0, toAllow(1)),
		LoadWord(OffNr),
		Jump(unix.BPF_JEQ, nr, 0, toAllow(3)),
		LoadWord(ArgLow(0)),
	}
	for _, f := range fams {
		prog = append(prog, Jump(unix.BPF_JEQ, f.AF, toAllow(len(prog)), 0))
	}
	return append(prog, Ret(deny), Ret(RetAllow)), nil
}

// SocketTCPProg is SocketProg's program for a run that
// reaches only the proxy: socket(2) of AF_INET works only with the type
// SOCK_STREAM (SOCK_NONBLOCK and SOCK_CLOEXEC aside) and the protocol 0
// or IPPROTO_TCP, so no UDP, raw, SCTP or MPTCP socket; the families of
// fams work whole; everything else fails with EACCES. So does a send
// with MSG_FASTOPEN (sendto, sendmsg, sendmmsg): TCP Fast Open connects
// without connect(2), and Landlock's TCP rule does not see it.
func SocketTCPProg(info *Table, fams []Family) ([]unix.SockFilter, error) {
	nrs := map[string]uint32{}
	for _, name := range []string{"socket", "sendto", "sendmsg", "sendmmsg"} {
		nr, ok := info.Nr[name]
		if !ok {
			return nil, fmt.Errorf("socket filter: no %s(2) on %s", name, info.Name)
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
		LoadWord(OffArch),
		Jump(unix.BPF_JEQ, info.Audit, 0, to(allowAt, 1)),
		LoadWord(OffNr),
		// The sends' flags: sendto's and sendmmsg's fourth argument,
		// sendmsg's third.
		Jump(unix.BPF_JEQ, nrs["sendto"], 0, 2),
		LoadWord(ArgLow(3)),
		Jump(unix.BPF_JSET, unix.MSG_FASTOPEN, to(denyAt, 5), to(allowAt, 5)),
		Jump(unix.BPF_JEQ, nrs["sendmsg"], 0, 2),
		LoadWord(ArgLow(2)),
		Jump(unix.BPF_JSET, unix.MSG_FASTOPEN, to(denyAt, 8), to(allowAt, 8)),
		Jump(unix.BPF_JEQ, nrs["sendmmsg"], 0, 2),
		LoadWord(ArgLow(3)),
		Jump(unix.BPF_JSET, unix.MSG_FASTOPEN, to(denyAt, 11), to(allowAt, 11)),
		Jump(unix.BPF_JEQ, nrs["socket"], 0, to(allowAt, 12)),
		LoadWord(ArgLow(0)),
		Jump(unix.BPF_JEQ, unix.AF_INET, 0, to(famsAt, 14)),
		// The type: SOCK_STREAM with or without the two flags (any
		// other bit is EINVAL to the kernel anyway).
		LoadWord(ArgLow(1)),
		Jump(unix.BPF_JEQ, unix.SOCK_STREAM, to(protoAt, 16), 0),
		Jump(unix.BPF_JEQ, unix.SOCK_STREAM|nb, to(protoAt, 17), 0),
		Jump(unix.BPF_JEQ, unix.SOCK_STREAM|ce, to(protoAt, 18), 0),
		Jump(unix.BPF_JEQ, unix.SOCK_STREAM|nb|ce, 0, to(denyAt, 19)),
		LoadWord(ArgLow(2)),
		Jump(unix.BPF_JEQ, 0, to(allowAt, 21), 0),
		Jump(unix.BPF_JEQ, unix.IPPROTO_TCP, to(allowAt, 22), to(denyAt, 22)),
	}
	for _, f := range fams {
		prog = append(prog, Jump(unix.BPF_JEQ, f.AF, to(allowAt, len(prog)), 0))
	}
	return append(prog, Ret(deny), Ret(RetAllow)), nil
}
