// Package pid1 holds steps PID 1 of the linux tier applies to itself and
// to the namespaces it is the first process of, which need nothing of the
// run but its memory cap: deaf to the command's signals, the loopback
// device up, the IPC namespace bounded. Package internal/sandbox decides
// when each runs and reports it.
package pid1

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"
)

// DeafToCommand makes PID 1 deaf to every signal the command can send
// it. The kernel delivers a signal from inside the PID namespace to its
// init only when init handles it; the Go runtime installs a handler for
// every signal at start, and one it does not pass to os/signal (SEGV,
// BUS, ABRT, ILL, FPE, TRAP, SYS, QUIT, TERM, HUP, … sent with kill)
// crashes or ends PID 1 and with it the run. So the disposition of each
// classic signal is set back to SIG_DFL: the kernel then drops it when it
// comes from inside, and the caller's SIGKILL (from the parent namespace)
// still ends the run. A real fault in PID 1 still kills it (the kernel
// forces synchronous faults on an init), without a Go stack dump. SIGURG
// keeps the runtime's handler (goroutine preemption; it ignores one sent
// by kill), and so do the real-time signals, which the runtime ignores or
// uses between its own threads. Not os/signal: Notify on every signal
// takes a round trip to the runtime's signal-mask thread per signal,
// about 4 ms of CPU per run (200 context switches), against 30 syscalls.
// SIG_DFL, not SIG_IGN, so the command, forked from PID 1, starts with
// default dispositions.
func DeafToCommand() {
	var dfl [4]uint64 // struct sigaction, every field zero: SIG_DFL, no flags, empty mask
	for sig := 1; sig < 32; sig++ {
		switch unix.Signal(sig) {
		case unix.SIGKILL, unix.SIGSTOP, unix.SIGURG:
			continue
		}
		_, _, _ = unix.RawSyscall6(unix.SYS_RT_SIGACTION, uintptr(sig), uintptr(unsafe.Pointer(&dfl)), 0, 8, 0, 0)
	}
}

// LoopbackUp brings up lo in the new network namespace, so servers a
// command starts on 127.0.0.1 work.
func LoopbackUp() error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("loopback: %w", err)
	}
	defer unix.Close(fd)
	ifr, err := unix.NewIfreq("lo")
	if err != nil {
		return fmt.Errorf("loopback: %w", err)
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFFLAGS, ifr); err != nil {
		return fmt.Errorf("loopback flags: %w", err)
	}
	ifr.SetUint16(ifr.Uint16() | unix.IFF_UP)
	if err := unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr); err != nil {
		return fmt.Errorf("loopback up: %w", err)
	}
	return nil
}

// LimitIPC bounds what this process's IPC namespace may hold to mem
// bytes, the run's memory cap: SysV shared memory (shmall, in pages, and
// shmmax per segment) and SysV message queues (msgmni queues of msgmnb
// bytes). A memory cgroup charges both, but where rlimits carry the cap
// nothing else does: a segment keeps its pages after it is detached,
// outside the address space the rlimit counts, and the defaults allow 16
// EiB of segments and 32000 queues of 16 KiB (500 MiB). The caller holds
// CAP_SYS_ADMIN over the namespace (PID 1 owns its user namespace). Each
// sysctl is written below the first of roots (directories like
// /proc/sys) that takes it; the error names each that none took. mem <= 0
// leaves the namespace as it is.
func LimitIPC(mem int64, roots []string) error {
	if mem <= 0 {
		return nil
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
		if err := writeIPCLimit(roots, s.name, s.v); err != nil {
			errs = append(errs, err.Error())
		}
	}
	if len(errs) > 0 {
		return errors.New(strings.Join(errs, "; "))
	}
	return nil
}

// writeIPCLimit writes one ipc sysctl below the first of roots that
// takes it.
func writeIPCLimit(roots []string, name string, v int64) error {
	err := fmt.Errorf("%s: no sysctl directory", name)
	for _, root := range roots {
		if err = os.WriteFile(root+"/"+name, []byte(strconv.FormatInt(v, 10)), 0); err == nil {
			return nil
		}
	}
	return err
}
