package sandbox

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"golang.org/x/sys/unix"
)

// explainFailure turns a backend's setup failure into words a user can act
// on: for the linux tier the reason user namespaces are unavailable and
// how to allow them, never the bare errno of the call that tripped.
func explainFailure(backend string, err error) string {
	switch backend {
	case BackendLinux:
		if why := usernsBlocked(err); why != "" {
			return why
		}
	case BackendLandlock:
		if landlockABI() < 1 {
			return landlockMissing()
		}
	}
	return err.Error()
}

// lsmFile lists the kernel's active security modules, where securityfs is
// mounted (a container often has it absent).
const lsmFile = "/sys/kernel/security/lsm"

// landlockMissing says why Landlock cannot be used here, in words a user
// can act on: it asks the kernel for its Landlock version again and reads
// lsmFile.
func landlockMissing() string {
	_, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, 0, 0, unix.LANDLOCK_CREATE_RULESET_VERSION)
	lsm, err := os.ReadFile(lsmFile)
	return landlockMissingWhy(errno, string(lsm), err == nil)
}

// landlockMissingWhy is landlockMissing's reasoning: errno is what the
// version query failed with, lsm the contents of lsmFile when haveLSM.
// ENOSYS comes alike from a kernel built without Landlock and from a
// seccomp profile (a container runtime's) that refuses the call; a kernel
// that has Landlock but did not enable it at boot says EOPNOTSUPP.
func landlockMissingWhy(errno unix.Errno, lsm string, haveLSM bool) string {
	const needs = "needs Linux 5.13+ with landlock in the lsm= boot parameter"
	enabled := haveLSM && slices.Contains(strings.Split(strings.TrimSpace(lsm), ","), "landlock")
	switch {
	case errno == unix.EOPNOTSUPP:
		return "the kernel has Landlock but it is not enabled (" + needs + "; " + lsmFile + " lists the enabled modules)"
	case errno == unix.ENOSYS && enabled:
		return "the kernel has Landlock (" + lsmFile + " lists it) but its system calls fail with ENOSYS: " +
			"a seccomp profile, such as a container runtime's, refuses them; allow landlock_create_ruleset, " +
			"landlock_add_rule and landlock_restrict_self in it"
	case errno == unix.ENOSYS && haveLSM:
		return "the kernel has no Landlock enabled (" + needs + "; " + lsmFile + " lists " + strings.TrimSpace(lsm) + ")"
	case errno == unix.ENOSYS:
		return "Landlock's system calls fail with ENOSYS: either the kernel has no Landlock (" + needs +
			") or a seccomp profile, such as a container runtime's, refuses them (" + lsmFile + ", which would tell, is not mounted here)"
	case errno != 0:
		return "Landlock's version query failed: " + errno.Error()
	}
	return "Landlock is not usable here"
}

// usernsBlocked says why creating the sandbox's user namespace failed, or
// "" when err is not that failure.
func usernsBlocked(err error) string {
	if !strings.Contains(err.Error(), "init child") {
		return ""
	}
	var errno unix.Errno
	if !errors.As(err, &errno) {
		// The spawn stage reports its failure as text.
		for _, e := range []unix.Errno{unix.ENOSPC, unix.EUSERS, unix.EPERM, unix.EACCES, unix.EINVAL} {
			if strings.HasSuffix(err.Error(), e.Error()) {
				errno = e
			}
		}
		if errno == 0 {
			return ""
		}
	}
	read := func(p string) string {
		b, err := os.ReadFile(p)
		if err != nil {
			return ""
		}
		return strings.TrimSpace(string(b))
	}
	var causes []string
	fix := "allow unprivileged user namespaces, or run where they are allowed"
	if read("/proc/sys/user/max_user_namespaces") == "0" {
		causes = append(causes, "user.max_user_namespaces=0")
		fix = "sudo sysctl -w user.max_user_namespaces=15000"
	}
	if read("/proc/sys/kernel/apparmor_restrict_unprivileged_userns") == "1" {
		causes = append(causes, "kernel.apparmor_restrict_unprivileged_userns=1 (Ubuntu 24.04+)")
		fix = "sudo sysctl -w kernel.apparmor_restrict_unprivileged_userns=0, or give ioh-lsp an AppArmor profile with the userns rule"
	}
	if read("/proc/sys/kernel/unprivileged_userns_clone") == "0" {
		causes = append(causes, "kernel.unprivileged_userns_clone=0")
		fix = "sudo sysctl -w kernel.unprivileged_userns_clone=1"
	}
	switch {
	case len(causes) > 0:
	case errors.Is(errno, unix.ENOSPC) || errors.Is(errno, unix.EUSERS):
		causes = append(causes, "the user-namespace limit of this namespace is 0 or used up (max_user_namespaces; "+
			"typical inside a sandbox or container that disables nested namespaces)")
		fix = "run outside that sandbox or container, or raise its user.max_user_namespaces"
	case errors.Is(errno, unix.EPERM) || errors.Is(errno, unix.EACCES):
		causes = append(causes, "the kernel refused them (EPERM: a container runtime's seccomp profile, "+
			"an AppArmor or SELinux policy, or a hardened kernel)")
		fix = "run the container with a seccomp profile that allows clone(CLONE_NEWUSER) and unshare (Docker: --security-opt seccomp=unconfined), or allow user namespaces on the host"
	case errors.Is(errno, unix.EINVAL):
		causes = append(causes, "the kernel was built without user namespaces (CONFIG_USER_NS)")
		fix = "use a kernel with CONFIG_USER_NS=y"
	default:
		return ""
	}
	return fmt.Sprintf("user namespaces unavailable: %s (clone with CLONE_NEWUSER failed: %s); to get the linux tier: %s",
		strings.Join(causes, ", "), unix.ErrnoName(errno), fix)
}
