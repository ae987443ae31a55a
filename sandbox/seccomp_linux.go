package sandbox

import (
	"fmt"
	"strings"

	seccomp "github.com/elastic/go-seccomp-bpf"
	"github.com/elastic/go-seccomp-bpf/arch"
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

// nsCloneFlags are the clone(2) flags that create namespaces.
const nsCloneFlags = unix.CLONE_NEWNS | unix.CLONE_NEWUTS | unix.CLONE_NEWIPC | unix.CLONE_NEWUSER |
	unix.CLONE_NEWPID | unix.CLONE_NEWNET | unix.CLONE_NEWCGROUP | unix.CLONE_NEWTIME

// seccompPolicy is the deny-list filter. clone with a namespace flag is
// refused; clone3 passes its flags in memory a filter cannot read, so it
// fails with ENOSYS and libc falls back to clone, which is checked.
// TIOCSTI (typing into a terminal) is refused on any fd.
func seccompPolicy() (seccomp.Policy, error) {
	info, err := arch.GetInfo("")
	if err != nil {
		return seccomp.Policy{}, fmt.Errorf("seccomp: %w", err)
	}
	// Some calls do not exist on every architecture (iopl on arm64).
	var names []string
	for _, n := range deniedSyscalls {
		if _, ok := info.SyscallNames[n]; ok {
			names = append(names, n)
		}
	}
	eperm := seccomp.ActionErrno | seccomp.Action(unix.EPERM)
	enosys := seccomp.ActionErrno | seccomp.Action(unix.ENOSYS)
	return seccomp.Policy{
		DefaultAction: seccomp.ActionAllow,
		Syscalls: []seccomp.SyscallGroup{
			{Action: eperm, Names: names},
			{Action: eperm, NamesWithCondtions: []seccomp.NameWithConditions{
				{Name: "clone", Conditions: seccomp.ArgumentConditions{
					{Argument: 0, Operation: seccomp.BitsSet, Value: nsCloneFlags}}},
				{Name: "ioctl", Conditions: seccomp.ArgumentConditions{
					{Argument: 1, Operation: seccomp.Equal, Value: unix.TIOCSTI}}},
				{Name: "ioctl", Conditions: seccomp.ArgumentConditions{
					{Argument: 1, Operation: seccomp.Equal, Value: unix.TIOCLINUX}}},
			}},
			{Action: enosys, Names: []string{"clone3"}},
		},
	}, nil
}

// applySeccomp loads the filter on the calling thread (which then execs
// the command). no_new_privs is already set.
func applySeccomp() (Mechanism, error) {
	if !seccomp.Supported() {
		return Mechanism{"seccomp", StateUnavailable, "kernel has no seccomp filter support"}, nil
	}
	policy, err := seccompPolicy()
	if err != nil {
		return Mechanism{}, err
	}
	if err := seccomp.LoadFilter(seccomp.Filter{Policy: policy}); err != nil {
		return Mechanism{}, fmt.Errorf("load seccomp filter: %w", err)
	}
	return Mechanism{"seccomp", StateApplied, fmt.Sprintf("deny-list of %d calls (%s, …), clone with namespace flags, clone3→ENOSYS",
		len(policy.Syscalls[0].Names), strings.Join(deniedSyscalls[:3], ", "))}, nil
}
