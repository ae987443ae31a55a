package sandbox

import "golang.org/x/sys/unix"

// Solaris and illumos have no RLIMIT_NPROC: a process cap fails the
// floor's stage (rlimit_types.go).
const (
	rlimitAS    = unix.RLIMIT_AS
	rlimitNproc = -1
)

func rlimitOf(cur, max uint64) unix.Rlimit { return unix.Rlimit{Cur: cur, Max: max} }

func rlimitMax(r unix.Rlimit) uint64 { return r.Max }
