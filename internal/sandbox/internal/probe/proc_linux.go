package main

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

func kill(a []string) error {
	pid, err := strconv.Atoi(a[0])
	if err != nil {
		return fmt.Errorf("pid %q: %w", a[0], err)
	}
	return unix.Kill(pid, unix.SIGCONT)
}

func ptrace(a []string) error {
	pid, err := strconv.Atoi(a[0])
	if err != nil {
		return fmt.Errorf("pid %q: %w", a[0], err)
	}
	// The tracer is the thread that attached: detaching from another one
	// is ESRCH ("no such process"), so the goroutine keeps its thread.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := unix.PtraceAttach(pid); err != nil {
		return err
	}
	var ws unix.WaitStatus
	_, _ = unix.Wait4(pid, &ws, 0, nil)
	return unix.PtraceDetach(pid)
}

// spawn starts a[0] processes (`sleep 30`), all alive at once, and ends
// them before it returns.
func spawn(a []string) error {
	n, err := strconv.Atoi(a[0])
	if err != nil {
		return fmt.Errorf("count %q: %w", a[0], err)
	}
	var cmds []*exec.Cmd
	defer func() {
		for _, c := range cmds {
			c.Process.Kill()
			c.Wait()
		}
	}()
	for i := 0; i < n; i++ {
		c := exec.Command("sleep", "30")
		if err := c.Start(); err != nil {
			return fmt.Errorf("process %d: %w", i, err)
		}
		cmds = append(cmds, c)
	}
	return nil
}

// sleep says "ready" once its runtime handles signals, then sleeps a[0]
// seconds in 100 ms steps.
func sleep(a []string) error {
	d, err := strconv.Atoi(a[0])
	if err != nil {
		return fmt.Errorf("seconds %q: %w", a[0], err)
	}
	os.Stdout.WriteString("ready\n")
	for i := 0; i < d*10; i++ {
		_ = unix.Nanosleep(&unix.Timespec{Nsec: 100e6}, nil)
	}
	return nil
}

// spin burns a[0] of CPU time, not wall time: the machine may be busy.
func spin(a []string) error {
	d, err := time.ParseDuration(a[0])
	if err != nil {
		return err
	}
	for {
		var ru unix.Rusage
		if err := unix.Getrusage(unix.RUSAGE_SELF, &ru); err != nil {
			return err
		}
		if time.Duration(ru.Utime.Nano()+ru.Stime.Nano()) >= d {
			return nil
		}
		for i := 0; i < 1e6; i++ {
		}
	}
}

// rawSyscall makes one call the seccomp filter must refuse, with
// arguments that succeed where the call is allowed.
func rawSyscall(a []string) error {
	var r1 uintptr
	var errno unix.Errno
	switch a[0] {
	case "io_uring_setup":
		var params [120]byte
		r1, _, errno = unix.Syscall(unix.SYS_IO_URING_SETUP, 1, uintptr(unsafe.Pointer(&params[0])), 0)
	case "bpf":
		// BPF_MAP_CREATE of a tiny array map.
		attr := [5]uint32{2 /* BPF_MAP_TYPE_ARRAY */, 4, 4, 1, 0}
		r1, _, errno = unix.Syscall(unix.SYS_BPF, 0, uintptr(unsafe.Pointer(&attr[0])), unsafe.Sizeof(attr))
	case "keyctl":
		// KEYCTL_GET_KEYRING_ID of the process keyring, creating it.
		_, _, errno = unix.Syscall(unix.SYS_KEYCTL, 0, ^uintptr(1) /* -2 */, 1)
		return errnoErr(errno)
	case "clone_newuser": // fork into a new user namespace; the child exits at once
		return cloneNewUser()
	case "perf_event_open":
		attr := unix.PerfEventAttr{Type: unix.PERF_TYPE_SOFTWARE, Config: unix.PERF_COUNT_SW_TASK_CLOCK, Bits: unix.PerfBitDisabled | unix.PerfBitExcludeKernel | unix.PerfBitExcludeHv}
		attr.Size = uint32(unsafe.Sizeof(attr))
		fd, err := unix.PerfEventOpen(&attr, 0, -1, -1, 0)
		if err == nil {
			unix.Close(fd)
		}
		return err
	default:
		return fmt.Errorf("unknown syscall %q", a[0])
	}
	if errno != 0 {
		return errno
	}
	unix.Close(int(r1))
	return nil
}

func cloneNewUser() error {
	pid, _, e := unix.RawSyscall6(unix.SYS_CLONE, unix.CLONE_NEWUSER|uintptr(unix.SIGCHLD), 0, 0, 0, 0, 0)
	if e != 0 {
		return e
	}
	if pid == 0 {
		unix.RawSyscall(unix.SYS_EXIT_GROUP, 0, 0, 0)
	}
	var ws unix.WaitStatus
	_, err := unix.Wait4(int(pid), &ws, 0, nil)
	return err
}

// ioctlReaches makes an ioctl with command a[0] (which may have bits
// above 32 set) on /dev/null: the tty layer answers ENOTTY, so getting
// that answer means the call got past the seccomp filter (its answer is
// EPERM).
func ioctlReaches(a []string) error {
	cmd, err := strconv.ParseUint(a[0], 0, 64)
	if err != nil {
		return err
	}
	f, err := os.Open("/dev/null")
	if err != nil {
		return err
	}
	defer f.Close()
	var b byte = 'x'
	_, _, e := unix.Syscall(unix.SYS_IOCTL, f.Fd(), uintptr(cmd), uintptr(unsafe.Pointer(&b)))
	if e == unix.ENOTTY {
		return nil
	}
	return fmt.Errorf("ioctl %#x: %w", cmd, e)
}
