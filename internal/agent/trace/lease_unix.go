//go:build unix

package trace

import (
	"errors"
	"syscall"
)

// processExists reports whether pid names a live process (a zombie counts
// as gone only once reaped).
func processExists(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
