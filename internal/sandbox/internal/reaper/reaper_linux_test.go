package reaper

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// start starts sh -c script as a child of the test process; Until or
// KillDescendants reaps it, never exec.Cmd.Wait.
func start(t *testing.T, script string) int {
	t.Helper()
	cmd := exec.Command("/bin/sh", "-c", script)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return cmd.Process.Pid
}

// TestUntil: Until returns the command's exit code or the signal that
// killed it and its CPU time, and reaps the other children that exit
// before it (orphans, for PID 1) on the way.
func TestUntil(t *testing.T) {
	if e := Until(start(t, "exit 7")); e != (Ended{Exit: 7, CPU: e.CPU}) {
		t.Fatalf("exit 7: %+v", e)
	}
	if e := Until(start(t, "kill -9 $$")); e.Signal != int(unix.SIGKILL) || e.Exit != 0 {
		t.Fatalf("killed by SIGKILL: %+v", e)
	}
	spin := Until(start(t, "i=0; while [ $i -lt 50000 ]; do i=$((i+1)); done"))
	if spin.Exit != 0 || spin.CPU < 10*time.Millisecond {
		t.Fatalf("a busy loop: %+v, want exit 0 and its CPU time", spin)
	}
	other := start(t, "exit 0")
	if e := Until(start(t, "sleep 0.2; exit 3")); e.Exit != 3 {
		t.Fatalf("exit 3: %+v", e)
	}
	var ws unix.WaitStatus
	if _, err := unix.Wait4(other, &ws, unix.WNOHANG, nil); !errors.Is(err, unix.ECHILD) {
		t.Fatalf("the other child was not reaped: wait4 %v", err)
	}
	if !NoChildren() {
		t.Fatal("children left after Until")
	}
}

// TestKillDescendants: as a child subreaper, the test process finds and
// kills a grandchild that left its session and whose parent exited
// (control: before, it is there and alive).
func TestKillDescendants(t *testing.T) {
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		t.Skipf("subreaper: %v", err)
	}
	defer unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0)
	pidFile := filepath.Join(t.TempDir(), "pid")
	start(t, "setsid sleep 100 </dev/null >/dev/null 2>&1 & echo $! >"+pidFile+"; exit 0")
	var grand int
	for deadline := time.Now().Add(10 * time.Second); grand == 0; {
		if b, err := os.ReadFile(pidFile); err == nil && len(b) > 1 {
			grand = atoiOr(t, b)
		}
		if time.Now().After(deadline) {
			t.Fatal("the grandchild did not start")
		}
		time.Sleep(time.Millisecond)
	}
	self := os.Getpid()
	for deadline := time.Now().Add(10 * time.Second); !slices.Contains(descendants(self), grand); {
		if time.Now().After(deadline) {
			t.Fatalf("control: grandchild %d is not among the descendants %v", grand, descendants(self))
		}
		time.Sleep(time.Millisecond)
	}
	if s := ProcState(grand); s == 'Z' {
		t.Fatalf("control: grandchild %d is not alive", grand)
	}
	if got, scan := descendants(self), descendantsByScan(self); !slices.Equal(sorted(got), sorted(scan)) {
		t.Fatalf("descendants %v, by scan %v", got, scan)
	}
	KillDescendants()
	if d := descendants(self); len(d) != 0 {
		t.Fatalf("descendants left: %v", d)
	}
	if unix.Kill(grand, 0) == nil {
		t.Fatalf("grandchild %d still exists", grand)
	}
	if !NoChildren() {
		t.Fatal("children left")
	}
}

// TestStatFields: the fields after the command name, whatever the name
// holds (here ") Z 1 ("), and a process that is gone reads as a zombie.
func TestStatFields(t *testing.T) {
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Skip(err)
	}
	b, err := os.ReadFile(sleep)
	if err != nil {
		t.Fatal(err)
	}
	odd := filepath.Join(t.TempDir(), "x) Z 1 (y")
	if err := os.WriteFile(odd, b, 0o700); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(odd, "100")
	if err := cmd.Start(); err != nil {
		t.Skipf("cannot run a copy of sleep: %v", err)
	}
	pid := cmd.Process.Pid
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	f := StatFields(pid)
	if len(f) < 2 || f[1] != itoa(os.Getpid()) {
		t.Fatalf("fields %q: want the parent %d second", f, os.Getpid())
	}
	if s := ProcState(pid); s == 'Z' {
		t.Fatalf("a live process in state %c", s)
	}
	if pp := procPPid(pid); pp != os.Getpid() {
		t.Fatalf("parent %d, want %d", pp, os.Getpid())
	}
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	if s := ProcState(pid); s != 'Z' {
		t.Fatalf("a reaped process in state %c, want Z", s)
	}
}

func atoiOr(t *testing.T, b []byte) int {
	t.Helper()
	n, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func itoa(n int) string { return strconv.Itoa(n) }

func sorted(s []int) []int { return slices.Sorted(slices.Values(s)) }
