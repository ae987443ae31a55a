package sandbox

import (
	"errors"
	"time"

	"golang.org/x/sys/unix"

	"github.com/ioh-lsp/ioh-lsp/internal/sandbox/internal/reaper"
)

// exitedCPU blocks until the child pid has exited, leaves it unreaped for
// the caller's Wait, and returns its CPU time as RLIMIT_CPU counted it
// (reaper.CPU), so a SIGKILL from the CPU cap is told
// apart from any other under load too.
func exitedCPU(pid int) time.Duration {
	for {
		var info unix.Siginfo
		err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return 0
		}
		return reaper.CPU(pid)
	}
}
