package seccomp

import (
	"testing"

	"golang.org/x/sys/unix"
)

// TestSocketFilterProg runs the landlock tier's socket filter on socket(2)
// calls: with the network only the internet families and netlink pass,
// AF_UNIX only where Landlock confines it (ABI 9); without the network
// nothing but that AF_UNIX; other calls and foreign ABIs are left to the
// deny-list.
func TestSocketFilterProg(t *testing.T) {
	const allow, eacces = unix.SECCOMP_RET_ALLOW, unix.SECCOMP_RET_ERRNO | uint32(unix.EACCES)
	info, ok := TableOf("amd64")
	if !ok {
		t.Fatal("no amd64 table")
	}
	sock := info.Nr["socket"]
	for _, c := range []struct {
		network, unixConfined bool
		want                  map[uint64]uint32
	}{
		{true, false, map[uint64]uint32{unix.AF_INET: allow, unix.AF_INET6: allow, unix.AF_NETLINK: allow, unix.AF_UNIX: eacces, unix.AF_PACKET: eacces, unix.AF_VSOCK: eacces, 1<<32 | unix.AF_UNIX: eacces}},
		{true, true, map[uint64]uint32{unix.AF_INET: allow, unix.AF_UNIX: allow, unix.AF_PACKET: eacces}},
		{false, false, map[uint64]uint32{unix.AF_INET: eacces, unix.AF_UNIX: eacces, unix.AF_NETLINK: eacces}},
		{false, true, map[uint64]uint32{unix.AF_INET: eacces, unix.AF_UNIX: allow}},
	} {
		prog, err := SocketProg(info, Families(c.network, c.unixConfined))
		if err != nil {
			t.Fatal(err)
		}
		for fam, want := range c.want {
			if got := runFilter(t, prog, info.Audit, sock, fam, unix.SOCK_STREAM); got != want {
				t.Errorf("network %v, unix confined %v: socket(%#x) = %#x, want %#x", c.network, c.unixConfined, fam, got, want)
			}
		}
		if got := runFilter(t, prog, info.Audit, info.Nr["socketpair"]+1000, unix.AF_UNIX); got != allow {
			t.Errorf("another call: %#x, want allowed", got)
		}
		if got := runFilter(t, prog, unix.AUDIT_ARCH_I386, sock, unix.AF_UNIX); got != allow {
			t.Errorf("a foreign ABI's call: %#x, want it left to the deny-list", got)
		}
	}
}

// TestSocketFilterTCPProg checks the landlock tier's socket filter for a
// run that reaches only the proxy: TCP over IPv4 works, any other type,
// protocol or family does not (no UDP for DNS, no raw or MPTCP socket),
// and without AF_UNIX confinement no unix socket either; a send with
// MSG_FASTOPEN (a connect Landlock does not see) is refused.
func TestSocketFilterTCPProg(t *testing.T) {
	const allow, eacces = unix.SECCOMP_RET_ALLOW, unix.SECCOMP_RET_ERRNO | uint32(unix.EACCES)
	info, ok := TableOf("amd64")
	if !ok {
		t.Fatal("no amd64 table")
	}
	sock := info.Nr["socket"]
	for _, unixConfined := range []bool{false, true} {
		prog, err := SocketTCPProg(info, Families(false, unixConfined))
		if err != nil {
			t.Fatal(err)
		}
		unixWant := uint32(eacces)
		if unixConfined {
			unixWant = allow
		}
		for _, c := range []struct {
			name            string
			fam, typ, proto uint64
			want            uint32
		}{
			{"tcp", unix.AF_INET, unix.SOCK_STREAM, 0, allow},
			{"tcp, explicit protocol", unix.AF_INET, unix.SOCK_STREAM, unix.IPPROTO_TCP, allow},
			{"tcp with flags", unix.AF_INET, unix.SOCK_STREAM | unix.SOCK_NONBLOCK | unix.SOCK_CLOEXEC, 0, allow},
			{"udp", unix.AF_INET, unix.SOCK_DGRAM, 0, eacces},
			{"udp with flags", unix.AF_INET, unix.SOCK_DGRAM | unix.SOCK_CLOEXEC, unix.IPPROTO_UDP, eacces},
			{"raw", unix.AF_INET, unix.SOCK_RAW, unix.IPPROTO_ICMP, eacces},
			{"mptcp", unix.AF_INET, unix.SOCK_STREAM, unix.IPPROTO_MPTCP, eacces},
			{"sctp", unix.AF_INET, unix.SOCK_STREAM, unix.IPPROTO_SCTP, eacces},
			{"tcp over ipv6", unix.AF_INET6, unix.SOCK_STREAM, 0, eacces},
			{"netlink", unix.AF_NETLINK, unix.SOCK_RAW, 0, eacces},
			{"packet", unix.AF_PACKET, unix.SOCK_RAW, 0, eacces},
			{"unix", unix.AF_UNIX, unix.SOCK_STREAM, 0, unixWant},
		} {
			if got := runFilter(t, prog, info.Audit, sock, c.fam, c.typ, c.proto); got != c.want {
				t.Errorf("unix confined %v, %s: socket = %#x, want %#x", unixConfined, c.name, got, c.want)
			}
		}
		for _, c := range []struct {
			call string
			args []uint64
			want uint32
		}{
			{"sendto", []uint64{3, 0, 4, unix.MSG_FASTOPEN, 0, 16}, eacces},
			{"sendto", []uint64{3, 0, 4, unix.MSG_NOSIGNAL | unix.MSG_FASTOPEN}, eacces},
			{"sendto", []uint64{3, 0, 4, unix.MSG_NOSIGNAL}, allow},
			{"sendmsg", []uint64{3, 0, unix.MSG_FASTOPEN}, eacces},
			{"sendmsg", []uint64{3, 0, unix.MSG_DONTWAIT}, allow},
			{"sendmmsg", []uint64{3, 0, 1, unix.MSG_FASTOPEN}, eacces},
			{"sendmmsg", []uint64{3, 0, unix.MSG_FASTOPEN, 0}, allow}, // vlen, not flags
		} {
			if got := runFilter(t, prog, info.Audit, info.Nr[c.call], c.args...); got != c.want {
				t.Errorf("unix confined %v: %s%v = %#x, want %#x", unixConfined, c.call, c.args, got, c.want)
			}
		}
		if got := runFilter(t, prog, info.Audit, unix.SYS_CONNECT, unix.AF_INET); got != allow {
			t.Errorf("another call: %#x, want it left alone", got)
		}
		if got := runFilter(t, prog, unix.AUDIT_ARCH_I386, sock, unix.AF_INET, unix.SOCK_DGRAM); got != allow {
			t.Errorf("a foreign ABI's call: %#x, want it left to the deny-list", got)
		}
	}
}
