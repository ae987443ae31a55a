package sandbox

import (
	"testing"

	"golang.org/x/sys/unix"
)

// TestMetaFilterNamesEveryCall: the notifying filter hands over exactly
// the calls the supervisor decodes, by the kernel's numbers.
func TestMetaFilterNamesEveryCall(t *testing.T) {
	want := map[string]uint32{
		"chmod": unix.SYS_CHMOD, "fchmod": unix.SYS_FCHMOD, "fchmodat": unix.SYS_FCHMODAT, "fchmodat2": unix.SYS_FCHMODAT2,
		"chown": unix.SYS_CHOWN, "fchown": unix.SYS_FCHOWN, "lchown": unix.SYS_LCHOWN, "fchownat": unix.SYS_FCHOWNAT,
		"utime": unix.SYS_UTIME, "utimes": unix.SYS_UTIMES, "futimesat": unix.SYS_FUTIMESAT, "utimensat": unix.SYS_UTIMENSAT,
		"setxattr": unix.SYS_SETXATTR, "lsetxattr": unix.SYS_LSETXATTR, "fsetxattr": unix.SYS_FSETXATTR,
		"removexattr": unix.SYS_REMOVEXATTR, "lremovexattr": unix.SYS_LREMOVEXATTR, "fremovexattr": unix.SYS_FREMOVEXATTR,
		"setxattrat": unix.SYS_SETXATTRAT, "removexattrat": unix.SYS_REMOVEXATTRAT,
	}
	if len(metaCalls) != len(want) {
		t.Errorf("%d supervised calls, want %d", len(metaCalls), len(want))
	}
	for nr, c := range metaCalls {
		if w, ok := want[c.name]; !ok || w != nr {
			t.Errorf("%s is %d here, the kernel's number is %d", c.name, nr, w)
		}
	}
	if n := len(metaFilter(false)); n != 10+len(metaIoctls)+2*len(metaCalls) {
		t.Errorf("filter of %d instructions for %d calls", n, len(metaCalls))
	}
}
