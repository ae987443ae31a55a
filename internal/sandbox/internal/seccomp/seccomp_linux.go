// Package seccomp builds the sandbox's seccomp filters as classic BPF:
// the deny-list of the stages (Build: a syscall list and argument tests
// over one architecture's table, foreign ABIs refused), the landlock
// tier's socket filters (SocketProg, SocketTCPProg), the pieces other
// filters are made of (LoadWord, Jump, Ret, ArgLow), and Eval, which
// runs a program over one call as the kernel does. It decides nothing
// about a run: internal/sandbox picks the variant and loads it.
package seccomp

import (
	"fmt"
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
)

// deniedSyscalls fail with EPERM inside the sandbox. Mount-family calls are
// denied only here, in the exec stage, after the private root is built.
var deniedSyscalls = []string{
	"ptrace", "process_vm_readv", "process_vm_writev",
	"mount", "umount2", "pivot_root", "chroot", "move_mount", "open_tree",
	"fsopen", "fsconfig", "fsmount", "fspick", "mount_setattr",
	"kexec_load", "kexec_file_load", "init_module", "finit_module", "delete_module",
	"bpf", "perf_event_open", "userfaultfd",
	"io_uring_setup", "io_uring_enter", "io_uring_register",
	"keyctl", "add_key", "request_key",
	"unshare", "setns", "open_by_handle_at", "name_to_handle_at",
	"swapon", "swapoff", "reboot", "acct", "quotactl", "syslog",
	"settimeofday", "clock_settime", "clock_adjtime", "adjtimex",
	"iopl", "ioperm", "lookup_dcookie", "vhangup",
}

// enosysSyscalls take their arguments in memory a filter cannot read, so
// they fail with ENOSYS and libc falls back to the checked older call:
// clone3 (namespace flags) to clone, openat2 (creation mode) to openat.
var enosysSyscalls = []string{"clone3", "openat2"}

// sysvIPCSyscalls are System V shared memory, semaphores and message
// queues, ipc(2), their multiplexer on 32-bit x86, and POSIX message
// queues. A tier without an
// IPC namespace (landlock) refuses them with ENOSYS, as a kernel built
// without SysV IPC answers: there the host's segments, queues and
// semaphores are reachable by key or id (a same-uid 0600 segment is
// readable) and what a run makes outlives it. The linux tier has an IPC
// namespace of its own, which dies with the run.
var sysvIPCSyscalls = []string{
	"shmget", "shmat", "shmdt", "shmctl",
	"semget", "semop", "semtimedop", "semtimedop_time64", "semctl",
	"msgget", "msgsnd", "msgrcv", "msgctl", "ipc",
	// POSIX message queues live in the IPC namespace too (mq_open names
	// no file Landlock could judge).
	"mq_open", "mq_unlink", "mq_timedsend", "mq_timedsend_time64",
	"mq_timedreceive", "mq_timedreceive_time64", "mq_notify", "mq_getsetattr",
}

// nsCloneFlags are the clone(2) flags that create namespaces.
const nsCloneFlags = unix.CLONE_NEWNS | unix.CLONE_NEWUTS | unix.CLONE_NEWIPC | unix.CLONE_NEWUSER |
	unix.CLONE_NEWPID | unix.CLONE_NEWNET | unix.CLONE_NEWCGROUP | unix.CLONE_NEWTIME

// SetIDBits are the mode bits no file the command creates or changes may
// carry: on the host such a file runs with its owner's identity.
const SetIDBits = unix.S_ISUID | unix.S_ISGID

// createFlags are the open(2) flags with which the mode argument is used.
const createFlags = unix.O_CREAT | (unix.O_TMPFILE &^ unix.O_DIRECTORY)

// X32SyscallBit marks a syscall number of the x32 ABI on amd64: native
// architecture field, different calling convention and table.
const X32SyscallBit = 0x40000000

// Options selects the filter's variants. The zero value is the filter
// of the linux tier on the running architecture.
type Options struct {
	// Arch is a GOARCH ("amd64", "arm64"); "" is the running one.
	Arch string
	// DenyNetwork refuses socket(2) for every family but AF_UNIX, for
	// tiers without a network namespace.
	DenyNetwork bool
	// DenySysVIPC refuses System V IPC (sysvIPCSyscalls), for tiers
	// without an IPC namespace.
	DenySysVIPC bool
}

// Filter is an assembled filter and a summary for the report.
type Filter struct {
	Prog    []unix.SockFilter
	Summary string
}

// argCond is one test of a syscall argument's low 32 bits, which is all the
// kernel reads of the int, mode and flag arguments checked here (ioctl's
// command is an unsigned int: 0x100005412 is TIOCSTI).
type argCond struct {
	arg  int
	bits uint32 // match when arg & bits != 0
	eq   uint32 // else match when arg == eq
	ne   bool   // with eq: match when arg != eq
}

// seccompRule refuses a syscall, or one call of it whose arguments all
// match conds.
type seccompRule struct {
	name  string
	conds []argCond
	errno unix.Errno
}

// seccompRules lists what the filter refuses, in order.
func seccompRules(o Options) []seccompRule {
	var rules []seccompRule
	for _, n := range deniedSyscalls {
		rules = append(rules, seccompRule{name: n, errno: unix.EPERM})
	}
	for _, n := range enosysSyscalls {
		rules = append(rules, seccompRule{name: n, errno: unix.ENOSYS})
	}
	if o.DenySysVIPC {
		for _, n := range sysvIPCSyscalls {
			rules = append(rules, seccompRule{name: n, errno: unix.ENOSYS})
		}
	}
	bits := func(arg int, b uint32) argCond { return argCond{arg: arg, bits: b} }
	eq := func(arg int, v uint32) argCond { return argCond{arg: arg, eq: v} }
	rules = append(rules,
		seccompRule{name: "clone", conds: []argCond{bits(0, nsCloneFlags)}, errno: unix.EPERM},
		seccompRule{name: "ioctl", conds: []argCond{eq(1, unix.TIOCSTI)}, errno: unix.EPERM},
		seccompRule{name: "ioctl", conds: []argCond{eq(1, unix.TIOCLINUX)}, errno: unix.EPERM},
		// Set-user-ID and set-group-ID bits, in every call that sets a mode.
		seccompRule{name: "chmod", conds: []argCond{bits(1, SetIDBits)}, errno: unix.EPERM},
		seccompRule{name: "fchmod", conds: []argCond{bits(1, SetIDBits)}, errno: unix.EPERM},
		seccompRule{name: "fchmodat", conds: []argCond{bits(2, SetIDBits)}, errno: unix.EPERM},
		seccompRule{name: "fchmodat2", conds: []argCond{bits(2, SetIDBits)}, errno: unix.EPERM},
		seccompRule{name: "creat", conds: []argCond{bits(1, SetIDBits)}, errno: unix.EPERM},
		seccompRule{name: "open", conds: []argCond{bits(1, createFlags), bits(2, SetIDBits)}, errno: unix.EPERM},
		seccompRule{name: "openat", conds: []argCond{bits(2, createFlags), bits(3, SetIDBits)}, errno: unix.EPERM},
		seccompRule{name: "mknod", conds: []argCond{bits(1, SetIDBits)}, errno: unix.EPERM},
		seccompRule{name: "mknodat", conds: []argCond{bits(2, SetIDBits)}, errno: unix.EPERM},
	)
	if o.DenyNetwork {
		rules = append(rules, seccompRule{name: "socket", conds: []argCond{{arg: 0, eq: unix.AF_UNIX, ne: true}}, errno: unix.EACCES})
	}
	return rules
}

// BPF program pieces. seccomp_data is {nr u32, arch u32, ip u64, args
// [6]u64}, in the native byte order; the low half of an argument is the
// word at its offset on little-endian machines.
const (
	OffNr   = 0
	OffArch = 4
	offArgs = 16

	RetAllow = unix.SECCOMP_RET_ALLOW
	RetErrno = unix.SECCOMP_RET_ERRNO
)

func LoadWord(off uint32) unix.SockFilter {
	return unix.SockFilter{Code: unix.BPF_LD | unix.BPF_W | unix.BPF_ABS, K: off}
}

func Jump(op uint16, k uint32, jt, jf uint8) unix.SockFilter {
	return unix.SockFilter{Code: unix.BPF_JMP | op | unix.BPF_K, Jt: jt, Jf: jf, K: k}
}

func Ret(k uint32) unix.SockFilter {
	return unix.SockFilter{Code: unix.BPF_RET | unix.BPF_K, K: k}
}

// ArgLow is where the low 32 bits of argument i sit in seccomp_data.
func ArgLow(i int) uint32 {
	off := uint32(offArgs + 8*i)
	if !littleEndian() {
		off += 4
	}
	return off
}

func littleEndian() bool {
	x := uint16(1)
	return *(*byte)(unsafe.Pointer(&x)) == 1
}

// Build assembles the deny-list filter shared by every Linux
// tier. A syscall of any ABI other than the native one (i386 through
// int 0x80 or a compat task on amd64, the x32 numbers, arm32 compat on
// arm64) fails with ENOSYS before any rule is read: the rules name native
// numbers only, and another table would slip past them. Each rule is a
// self-contained block that reloads the syscall number, so every jump is
// short and a call no rule names takes only number loads (the kernel then
// caches it as always allowed).
func Build(o Options) (*Filter, error) {
	goarch := o.Arch
	if goarch == "" {
		goarch = runtime.GOARCH
	}
	info, ok := TableOf(goarch)
	if !ok {
		return nil, fmt.Errorf("seccomp: no syscall table for %s", goarch)
	}
	enosys := uint32(RetErrno | uint32(unix.ENOSYS))
	prog := []unix.SockFilter{
		LoadWord(OffArch),
		Jump(unix.BPF_JEQ, info.Audit, 1, 0),
		Ret(enosys),
		LoadWord(OffNr),
	}
	if info.Audit == unix.AUDIT_ARCH_X86_64 {
		prog = append(prog, Jump(unix.BPF_JGE, X32SyscallBit, 0, 1), Ret(enosys))
	}
	n := 0
	for _, r := range seccompRules(o) {
		nr, ok := info.Nr[r.name]
		if !ok {
			continue // not on this architecture (open, chmod, iopl on arm64)
		}
		n++
		var body []unix.SockFilter
		for i, c := range r.conds {
			// Jumps on a failed condition go past the rest of the block:
			// to the end of the conditions plus the return.
			skip := uint8(2*len(r.conds[i+1:]) + 1)
			body = append(body, LoadWord(ArgLow(c.arg)))
			switch {
			case c.bits != 0:
				body = append(body, Jump(unix.BPF_JSET, c.bits, 0, skip))
			case c.ne:
				body = append(body, Jump(unix.BPF_JEQ, c.eq, skip, 0))
			default:
				body = append(body, Jump(unix.BPF_JEQ, c.eq, 0, skip))
			}
		}
		body = append(body, Ret(uint32(RetErrno|uint32(r.errno))))
		if len(body) > 255 {
			return nil, fmt.Errorf("seccomp: rule %s too long", r.name)
		}
		prog = append(prog, LoadWord(OffNr), Jump(unix.BPF_JEQ, nr, 0, uint8(len(body))))
		prog = append(prog, body...)
	}
	prog = append(prog, Ret(RetAllow))
	if len(prog) > unix.BPF_MAXINSNS {
		return nil, fmt.Errorf("seccomp: filter of %d instructions is too long", len(prog))
	}
	sum := fmt.Sprintf("native %s ABI only (other ABIs ENOSYS); %d rules: ptrace, mount family, bpf, io_uring, keyctl, namespaces, TIOCSTI, set-id mode bits, …", info.Name, n)
	if o.DenyNetwork {
		sum += "; sockets other than AF_UNIX refused"
	}
	if o.DenySysVIPC {
		sum += "; System V IPC (shmget, semget, msgget, …) and POSIX message queues refused with ENOSYS: no IPC namespace"
	}
	return &Filter{Prog: prog, Summary: sum}, nil
}

// Load installs the filter on the calling thread; no_new_privs must be set.
func (f *Filter) Load() error {
	fprog := unix.SockFprog{Len: uint16(len(f.Prog)), Filter: &f.Prog[0]}
	_, _, e := unix.RawSyscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, 0, uintptr(unsafe.Pointer(&fprog)))
	runtime.KeepAlive(f)
	if e != 0 {
		return e
	}
	return nil
}

// Supported reports whether the kernel has seccomp filters: strict
// mode with a nonzero flag is EINVAL where the call exists.
func Supported() bool {
	_, _, e := unix.RawSyscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_STRICT, 1, 0)
	return e == unix.EINVAL
}
