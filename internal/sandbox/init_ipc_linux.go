package sandbox

import (
	"fmt"

	"github.com/ioh-lsp/ioh-lsp/internal/sandbox/internal/pid1"
)

// ipcLimitRoots are where PID 1 bounds its IPC namespace, tried in turn:
// the ipc sysctls a process reads and writes are those of its own IPC
// namespace whichever /proc it goes through, and PID 1's own /proc/sys
// is read-only by then, so it writes through the host's /proc, still
// attached below the interim root (rootfs_prepare_linux.go).
var ipcLimitRoots = []string{"/proc/sys", hostRoot + "/proc/sys"}

// limitIPC bounds what the run's own IPC namespace may hold to its memory
// cap (pid1.LimitIPC) and returns the ipc-namespace mechanism.
func limitIPC(mem int64) Mechanism {
	m := Mechanism{"ipc-namespace", StateApplied, ""}
	if mem <= 0 {
		return m
	}
	if err := pid1.LimitIPC(mem, ipcLimitRoots); err != nil {
		return Mechanism{"ipc-namespace", StateApplied, "SysV IPC not bounded by the memory cap: " + err.Error()}
	}
	m.Detail = fmt.Sprintf("SysV shared memory and message queues at most %s each (shmall, msgmni)", formatBytes(mem))
	return m
}
