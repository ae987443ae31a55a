//go:build freebsd || dragonfly

package sandbox

import (
	"math"

	"golang.org/x/sys/unix"
)

// Here unix.Rlimit holds int64, RLIM_INFINITY is its largest value
// (rlimit_types.go).
const (
	rlimitAS    = unix.RLIMIT_AS
	rlimitNproc = unix.RLIMIT_NPROC
)

func rlimitOf(cur, max uint64) unix.Rlimit {
	return unix.Rlimit{Cur: int64(min(cur, math.MaxInt64)), Max: int64(min(max, math.MaxInt64))}
}

func rlimitMax(r unix.Rlimit) uint64 {
	if r.Max < 0 {
		return math.MaxUint64
	}
	return uint64(r.Max)
}
