package sandbox

import (
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// TestLandlockMissingWhy: an ENOSYS from Landlock's calls names both
// causes unless lsmFile tells which, and points at lsmFile only when it
// is there to read.
func TestLandlockMissingWhy(t *testing.T) {
	for _, c := range []struct {
		name    string
		errno   unix.Errno
		lsm     string
		haveLSM bool
		want    []string
		wantNot []string
	}{
		{"seccomp in a container, kernel has it", unix.ENOSYS, "lockdown,capability,landlock,yama,apparmor\n", true,
			[]string{"has Landlock", "seccomp profile", "container"}, []string{"has no Landlock"}},
		{"kernel without it", unix.ENOSYS, "capability,yama,apparmor\n", true,
			[]string{"has no Landlock enabled", "lists capability,yama,apparmor"}, []string{"seccomp"}},
		{"no securityfs: both causes", unix.ENOSYS, "", false,
			[]string{"either the kernel has no Landlock", "or a seccomp profile", "not mounted here"}, []string{"check /sys"}},
		{"built in, not enabled", unix.EOPNOTSUPP, "capability\n", true,
			[]string{"not enabled", "lsm= boot parameter"}, []string{"seccomp"}},
	} {
		got := landlockMissingWhy(c.errno, c.lsm, c.haveLSM)
		for _, w := range c.want {
			if !strings.Contains(got, w) {
				t.Errorf("%s: %q lacks %q", c.name, got, w)
			}
		}
		for _, w := range c.wantNot {
			if strings.Contains(got, w) {
				t.Errorf("%s: %q says %q", c.name, got, w)
			}
		}
	}
}
