package sandbox

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// ipcLimitRoots are where PID 1 bounds its IPC namespace, tried in turn:
// the ipc sysctls a process reads and writes are those of its own IPC
// namespace whichever /proc it goes through, and PID 1's own /proc/sys
// is read-only by then, so it writes through the host's /proc, still
// attached below the interim root (rootfs_prepare_linux.go).
var ipcLimitRoots = []string{"/proc/sys", hostRoot + "/proc/sys"}

// limitIPC bounds what the run's own IPC namespace may hold to its memory
// cap: SysV shared memory (shmall, in pages, and shmmax per segment) and
// SysV message queues (msgmni queues of msgmnb bytes). A memory cgroup
// charges both, but where rlimits carry the cap nothing else does: a
// segment keeps its pages after it is detached, outside the address
// space the rlimit counts, and the defaults allow 16 EiB of segments and
// 32000 queues of 16 KiB (500 MiB). PID 1 holds CAP_SYS_ADMIN over the
// namespace, whose user namespace it owns. It returns the ipc-namespace
// mechanism.
func limitIPC(mem int64) Mechanism {
	m := Mechanism{"ipc-namespace", StateApplied, ""}
	if mem <= 0 {
		return m
	}
	page := int64(os.Getpagesize())
	const msgmnb = 16384 // the default, set again so the product holds
	set := []struct {
		name string
		v    int64
	}{
		{"kernel/shmmax", mem},
		{"kernel/shmall", (mem + page - 1) / page},
		{"kernel/msgmnb", msgmnb},
		{"kernel/msgmni", max(1, mem/msgmnb)},
	}
	var errs []string
	for _, s := range set {
		if err := writeIPCLimit(s.name, s.v); err != nil {
			errs = append(errs, err.Error())
		}
	}
	if len(errs) > 0 {
		return Mechanism{"ipc-namespace", StateApplied, "SysV IPC not bounded by the memory cap: " + strings.Join(errs, "; ")}
	}
	m.Detail = fmt.Sprintf("SysV shared memory and message queues at most %s each (shmall, msgmni)", formatBytes(mem))
	return m
}

// writeIPCLimit writes one ipc sysctl of this process's IPC namespace.
func writeIPCLimit(name string, v int64) error {
	var err error
	for _, root := range ipcLimitRoots {
		if err = os.WriteFile(root+"/"+name, []byte(strconv.FormatInt(v, 10)), 0); err == nil {
			return nil
		}
	}
	return err
}
