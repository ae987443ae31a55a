package seccomp

import (
	"fmt"
	"testing"

	"github.com/elastic/go-seccomp-bpf/arch"
	"golang.org/x/sys/unix"
)

// runFilter is Eval for a test: a program Eval cannot run fails it.
func runFilter(t *testing.T, prog []unix.SockFilter, auditArch uint32, nr uint32, args ...uint64) uint32 {
	t.Helper()
	ret, err := Eval(prog, auditArch, nr, args...)
	if err != nil {
		t.Fatal(err)
	}
	return ret
}

func TestSeccompFilterDecisions(t *testing.T) {
	const (
		allow  = unix.SECCOMP_RET_ALLOW
		eperm  = unix.SECCOMP_RET_ERRNO | uint32(unix.EPERM)
		enosys = unix.SECCOMP_RET_ERRNO | uint32(unix.ENOSYS)
		eacces = unix.SECCOMP_RET_ERRNO | uint32(unix.EACCES)
	)
	type call struct {
		name string
		args []uint64
		want uint32
	}
	creat := uint64(unix.O_CREAT | unix.O_WRONLY)
	common := []call{
		{"getpid", nil, allow},
		{"keyctl", []uint64{0, ^uint64(2), 0}, eperm},
		{"io_uring_setup", nil, eperm},
		{"userfaultfd", nil, eperm},
		{"ptrace", nil, eperm},
		{"unshare", []uint64{unix.CLONE_NEWUSER}, eperm},
		{"clone", []uint64{unix.CLONE_NEWUSER | uint64(unix.SIGCHLD)}, eperm},
		{"clone", []uint64{unix.CLONE_VM | unix.CLONE_THREAD}, allow},
		{"clone3", nil, enosys},
		{"openat2", nil, enosys},
		{"ioctl", []uint64{0, unix.TIOCSTI}, eperm},
		{"ioctl", []uint64{0, 1<<32 | unix.TIOCSTI}, eperm}, // the kernel reads 32 bits
		{"ioctl", []uint64{0, unix.TIOCLINUX}, eperm},
		{"ioctl", []uint64{0, unix.TIOCGWINSZ}, allow},
		{"fchmod", []uint64{3, 0o4755}, eperm},
		{"fchmod", []uint64{3, 0o2755}, eperm},
		{"fchmod", []uint64{3, 0o755}, allow},
		{"fchmod", []uint64{3, 1<<32 | 0o755}, allow},
		{"fchmodat", []uint64{0, 0, 0o6755}, eperm},
		{"fchmodat", []uint64{0, 0, 0o1777}, allow},
		{"fchmodat2", []uint64{0, 0, 0o4755, 0}, eperm},
		{"openat", []uint64{0, 0, creat, 0o4755}, eperm},
		{"openat", []uint64{0, 0, creat, 0o644}, allow},
		{"openat", []uint64{0, 0, unix.O_RDONLY, 0o4755}, allow}, // mode unused without O_CREAT
		{"openat", []uint64{0, 0, unix.O_TMPFILE | unix.O_RDWR, 0o2755}, eperm},
		{"mknodat", []uint64{0, 0, unix.S_IFREG | 0o4755, 0}, eperm},
		{"mknodat", []uint64{0, 0, unix.S_IFIFO | 0o644, 0}, allow},
		{"socket", []uint64{unix.AF_INET, unix.SOCK_STREAM, 0}, allow},
	}
	amd64Only := []call{
		{"chmod", []uint64{0, 0o4755}, eperm},
		{"chmod", []uint64{0, 0o755}, allow},
		{"creat", []uint64{0, 0o4755}, eperm},
		{"open", []uint64{0, creat, 0o6755}, eperm},
		{"open", []uint64{0, unix.O_RDONLY, 0o6755}, allow},
		{"mknod", []uint64{0, unix.S_IFREG | 0o2755, 0}, eperm},
	}
	for _, goarch := range []string{"amd64", "arm64"} {
		info, err := arch.GetInfo(goarch)
		if err != nil {
			t.Fatal(err)
		}
		f, err := Build(Options{Arch: goarch})
		if err != nil {
			t.Fatal(err)
		}
		calls := common
		if goarch == "amd64" {
			calls = append(append([]call{}, common...), amd64Only...)
		}
		for _, c := range calls {
			nr, ok := info.SyscallNames[c.name]
			if !ok {
				t.Fatalf("%s has no %s", goarch, c.name)
			}
			if got := runFilter(t, f.Prog, uint32(info.ID), uint32(nr), c.args...); got != c.want {
				t.Errorf("%s %s%v: filter returns %#x, want %#x", goarch, c.name, c.args, got, c.want)
			}
		}
		// Every syscall of a foreign ABI fails, whatever its number: the
		// i386 and x32 tables on amd64, arm32 compat on arm64.
		foreign := []*arch.Info{arch.I386, arch.ARM}
		for _, fa := range foreign {
			for _, name := range []string{"getpid", "keyctl", "unshare", "io_uring_setup", "userfaultfd", "ptrace"} {
				nr, ok := fa.SyscallNames[name]
				if !ok {
					continue
				}
				if got := runFilter(t, f.Prog, uint32(fa.ID), uint32(nr), unix.CLONE_NEWUSER); got != enosys {
					t.Errorf("%s: %s %s through the %s ABI: filter returns %#x, want ENOSYS", goarch, fa.Name, name, fa.Name, got)
				}
			}
		}
		if goarch == "amd64" {
			for _, name := range []string{"getpid", "keyctl", "unshare"} {
				nr := arch.X32.SyscallNames[name] | X32SyscallBit
				if got := runFilter(t, f.Prog, uint32(info.ID), uint32(nr)); got != enosys {
					t.Errorf("x32 %s: filter returns %#x, want ENOSYS", name, got)
				}
			}
		}
		// The network variant, for tiers without a network namespace.
		fn, err := Build(Options{Arch: goarch, DenyNetwork: true})
		if err != nil {
			t.Fatal(err)
		}
		// The System V IPC variant, for tiers without an IPC namespace.
		fi, err := Build(Options{Arch: goarch, DenySysVIPC: true})
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range []string{"shmget", "shmat", "semget", "msgget", "msgrcv"} {
			nr := uint32(info.SyscallNames[name])
			if got := runFilter(t, fi.Prog, uint32(info.ID), nr); got != enosys {
				t.Errorf("%s deny-sysv %s: %#x, want ENOSYS", goarch, name, got)
			}
			if got := runFilter(t, f.Prog, uint32(info.ID), nr); got != allow {
				t.Errorf("%s %s without the variant: %#x, want allowed", goarch, name, got)
			}
		}
		sock := uint32(info.SyscallNames["socket"])
		for fam, want := range map[uint64]uint32{unix.AF_UNIX: allow, unix.AF_INET: eacces, unix.AF_INET6: eacces, unix.AF_PACKET: eacces, 1<<32 | unix.AF_UNIX: allow} {
			if got := runFilter(t, fn.Prog, uint32(info.ID), sock, fam, unix.SOCK_STREAM); got != want {
				t.Errorf("%s deny-network socket(%s): %#x, want %#x", goarch, fmt.Sprint(fam), got, want)
			}
		}
	}
}

func TestSeccompDenyListNames(t *testing.T) {
	// Every name the filter refuses exists on the architectures the module
	// ships for, except the few that one of them lacks.
	lacks := map[string]map[string]bool{"arm64": {"iopl": true, "ioperm": true}}
	for _, a := range []string{"amd64", "arm64"} {
		info, err := arch.GetInfo(a)
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range append(append([]string{}, deniedSyscalls...), enosysSyscalls...) {
			if _, ok := info.SyscallNames[n]; !ok && !lacks[a][n] {
				t.Errorf("%s has no %s", a, n)
			}
		}
	}
}

// TestSyscallTables checks our own syscall tables (seccomp_tables_linux.go)
// against the reference tables of go-seccomp-bpf, which the binary no
// longer links: every name a filter refuses, on every architecture the
// table knows, has the reference's number and audit identifier; a name
// an architecture lacks is absent from both.
func TestSyscallTables(t *testing.T) {
	names := map[string]bool{"socket": true}
	for _, r := range seccompRules(Options{DenyNetwork: true, DenySysVIPC: true}) {
		names[r.name] = true
	}
	for _, a := range []string{"amd64", "arm64", "386", "arm"} {
		ours, ok := TableOf(a)
		if !ok {
			t.Fatalf("no table for %s", a)
		}
		ref, err := arch.GetInfo(a)
		if err != nil {
			t.Fatal(err)
		}
		if ours.Audit != uint32(ref.ID) {
			t.Errorf("%s: audit arch %#x, reference %#x", a, ours.Audit, uint32(ref.ID))
		}
		for n := range names {
			got, have := ours.Nr[n]
			want, refHas := ref.SyscallNames[n]
			if have != refHas || (have && got != uint32(want)) {
				t.Errorf("%s %s: ours %d (%v), reference %d (%v)", a, n, got, have, want, refHas)
			}
		}
		if len(ours.Nr) > len(names) {
			t.Errorf("%s: the table holds %d names, the filters use %d", a, len(ours.Nr), len(names))
		}
	}
	if _, ok := TableOf("mips"); ok {
		t.Error("a table for an architecture the sandbox does not know")
	}
}
