//go:build unix && !freebsd && !dragonfly && !openbsd && !solaris

package sandbox

import "golang.org/x/sys/unix"

// The rlimits the floor sets, where unix.Rlimit holds uint64 and every
// one exists (rlimit_unix.go; the other Unix systems have files of their
// own: a resource of -1 is one the system lacks, which fails the stage
// rather than run without the cap).
const (
	rlimitAS    = unix.RLIMIT_AS
	rlimitNproc = unix.RLIMIT_NPROC
)

func rlimitOf(cur, max uint64) unix.Rlimit { return unix.Rlimit{Cur: cur, Max: max} }

func rlimitMax(r unix.Rlimit) uint64 { return r.Max }
