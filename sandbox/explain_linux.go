package sandbox

import (
	"errors"
	"fmt"
	"os"
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
			return "the kernel has no Landlock (needs Linux 5.13+ with landlock in the lsm= boot parameter; " +
				"check /sys/kernel/security/lsm)"
		}
	}
	return err.Error()
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
