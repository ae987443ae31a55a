package sandbox

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// helperArg makes the test binary a probe: it tries one thing and exits 0
// when it worked, 1 when it was refused.
const helperArg = "__ioh_test_helper"

func helperMain(args []string) int {
	if len(args) == 0 {
		return 2
	}
	err := helperDo(args[0], args[1:])
	if err != nil {
		fmt.Fprintf(os.Stderr, "helper %s: %v\n", args[0], err)
		return 1
	}
	return 0
}

func helperDo(action string, a []string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	switch action {
	case "write":
		return os.WriteFile(a[0], []byte("x"), 0o644)
	case "read":
		b, err := os.ReadFile(a[0])
		if err == nil {
			os.Stdout.Write(b)
		}
		return err
	case "link": // hardlink a[0] as a[1], then write through the link
		if err := os.Link(a[0], a[1]); err != nil {
			return err
		}
		f, err := os.OpenFile(a[1], os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			return err
		}
		defer f.Close()
		_, err = f.WriteString("tampered\n")
		return err
	case "tcp", "udp", "unix":
		var d net.Dialer
		c, err := d.DialContext(ctx, action, a[0])
		if err != nil {
			return err
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(2 * time.Second))
		if _, err := c.Write([]byte("ping")); err != nil {
			return err
		}
		buf := make([]byte, 4)
		_, err = io.ReadFull(c, buf)
		return err
	case "dns":
		r := &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "udp", a[0])
		}}
		_, err := r.LookupHost(ctx, a[1])
		return err
	case "kill":
		pid, _ := strconv.Atoi(a[0])
		return unix.Kill(pid, unix.SIGCONT)
	case "ptrace":
		pid, _ := strconv.Atoi(a[0])
		if err := unix.PtraceAttach(pid); err != nil {
			return err
		}
		var ws unix.WaitStatus
		_, _ = unix.Wait4(pid, &ws, 0, nil)
		return unix.PtraceDetach(pid)
	case "spawn":
		n, _ := strconv.Atoi(a[0])
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
	case "alloc":
		n, _ := strconv.ParseInt(a[0], 10, 64)
		b := make([]byte, n)
		for i := 0; i < len(b); i += 4096 {
			b[i] = 1
		}
		return nil
	case "reserve": // reserve a[0] bytes PROT_NONE (as V8 and Go runtimes do), make a[1] of them writable and touch them
		n, _ := strconv.ParseInt(a[0], 10, 64)
		w, _ := strconv.ParseInt(a[1], 10, 64)
		m, err := unix.Mmap(-1, 0, int(n), unix.PROT_NONE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS|unix.MAP_NORESERVE)
		if err != nil {
			return fmt.Errorf("reserve %d bytes: %w", n, err)
		}
		if err := unix.Mprotect(m[:w], unix.PROT_READ|unix.PROT_WRITE); err != nil {
			return fmt.Errorf("make %d bytes writable: %w", w, err)
		}
		for i := int64(0); i < w; i += 4096 {
			m[i] = 1
		}
		return nil
	case "spin": // burn a[0] of CPU time (not wall time: the machine may be busy)
		d, _ := time.ParseDuration(a[0])
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
	case "syscall":
		return rawSyscall(a[0])
	}
	if f, ok := moreHelpers[action]; ok {
		return f(a)
	}
	return fmt.Errorf("unknown action %q", action)
}

// rawSyscall makes one call the seccomp filter must refuse, with arguments
// that succeed where the call is allowed.
func rawSyscall(name string) error {
	var r1 uintptr
	var errno unix.Errno
	switch name {
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
	case "perf_event_open":
		attr := unix.PerfEventAttr{Type: unix.PERF_TYPE_SOFTWARE, Config: unix.PERF_COUNT_SW_TASK_CLOCK, Bits: unix.PerfBitDisabled | unix.PerfBitExcludeKernel | unix.PerfBitExcludeHv}
		attr.Size = uint32(unsafe.Sizeof(attr))
		fd, err := unix.PerfEventOpen(&attr, 0, -1, -1, 0)
		if err == nil {
			unix.Close(fd)
		}
		return err
	default:
		return fmt.Errorf("unknown syscall %q", name)
	}
	if errno != 0 {
		return errno
	}
	unix.Close(int(r1))
	return nil
}

func errnoErr(e unix.Errno) error {
	if e != 0 {
		return e
	}
	return nil
}

var (
	helperOnce sync.Once
	helperBin  string
	helperErr  error
)

// helperPath copies the test binary where the sandbox can see it (the
// test binary itself lives under the host /tmp, which the sandbox
// replaces with a private one).
func helperPath(t *testing.T) string {
	t.Helper()
	helperOnce.Do(func() {
		self, err := os.Executable()
		if err != nil {
			helperErr = err
			return
		}
		dir, err := os.MkdirTemp("/var/tmp", "ioh-sandbox-helper-")
		if err != nil {
			helperErr = err
			return
		}
		os.Chmod(dir, 0o755)
		helperBin = filepath.Join(dir, "helper")
		in, err := os.ReadFile(self)
		if err == nil {
			err = os.WriteFile(helperBin, in, 0o755)
		}
		helperErr = err
	})
	if helperErr != nil {
		t.Fatalf("helper binary: %v", helperErr)
	}
	return helperBin
}

// outsideDir is a directory the sandbox sees read-only (not under /tmp,
// which it replaces), removed after the test.
func outsideDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("/var/tmp", "ioh-sandbox-outside-")
	if err != nil {
		t.Fatal(err)
	}
	os.Chmod(dir, 0o777)
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

func cleanupHelper() {
	if helperBin != "" {
		os.RemoveAll(filepath.Dir(helperBin))
	}
}
