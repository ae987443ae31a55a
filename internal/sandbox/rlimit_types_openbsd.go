package sandbox

import "golang.org/x/sys/unix"

// OpenBSD has no RLIMIT_AS: the memory cap is RLIMIT_DATA
// (rlimit_types.go).
const (
	rlimitAS    = -1
	rlimitNproc = unix.RLIMIT_NPROC
)

func rlimitOf(cur, max uint64) unix.Rlimit { return unix.Rlimit{Cur: cur, Max: max} }

func rlimitMax(r unix.Rlimit) uint64 { return r.Max }
