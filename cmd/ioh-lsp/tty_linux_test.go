package main

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// openPty returns a pseudo-terminal's controller and its terminal end.
func openPty(t *testing.T) (ptmx, tty *os.File) {
	t.Helper()
	ptmx, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals here: %v", err)
	}
	t.Cleanup(func() { ptmx.Close() })
	if err := unix.IoctlSetPointerInt(int(ptmx.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Fatalf("unlockpt: %v", err)
	}
	n, err := unix.IoctlGetInt(int(ptmx.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatalf("ptsname: %v", err)
	}
	tty, err = os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Fatalf("open the terminal end: %v", err)
	}
	t.Cleanup(func() { tty.Close() })
	return ptmx, tty
}

// TestBareOnATerminal: `ioh-lsp` typed in a terminal prints a short help
// and exits 2 instead of waiting for LSP frames; control: started over a
// pipe (as an editor does) it serves, and ends with the pipe (exit 0).
// `ioh-lsp serve` stopped by Ctrl-C (SIGINT) exits 130.
func TestBareOnATerminal(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := buildBinary(t)
	_, tty := openPty(t)
	state := t.TempDir()
	env := append(os.Environ(), "IOH_STATE_DIR="+state, "HOME="+state, "XDG_CONFIG_HOME="+state)
	// started, when not nil, gets the process once it runs (a goroutine
	// must not read cmd.Process while Start writes it).
	wait := func(cmd *exec.Cmd, started func(*os.Process)) (int, string) {
		var errb strings.Builder
		cmd.Stderr, cmd.Env, cmd.Dir = &errb, env, state
		done := make(chan error, 1)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		if started != nil {
			go started(cmd.Process)
		}
		go func() { done <- cmd.Wait() }()
		return waitCode(t, cmd, done), errb.String()
	}
	cmd := exec.Command(bin)
	cmd.Stdin = tty
	if code, stderr := wait(cmd, nil); code != exitUsage || !strings.Contains(stderr, "ioh-lsp is a language server") {
		t.Errorf("bare on a terminal: exit %d, stderr %q; want 2 and the short help", code, stderr)
	}
	cmd = exec.Command(bin)
	cmd.Stdin = strings.NewReader("")
	if code, stderr := wait(cmd, nil); code != 0 || strings.Contains(stderr, "ioh-lsp is a language server") {
		t.Errorf("control, bare over a pipe: exit %d, stderr %q; want it to serve", code, stderr)
	}
	cmd = exec.Command(bin, "serve")
	r, w, _ := os.Pipe()
	defer w.Close()
	cmd.Stdin = r
	ctrlC := func(p *os.Process) {
		time.Sleep(300 * time.Millisecond)
		p.Signal(syscall.SIGINT)
	}
	if code, stderr := wait(cmd, ctrlC); code != exitCancelled {
		t.Errorf("serve after Ctrl-C: exit %d, want 130\n%s", code, stderr)
	}
	r.Close()
}

func waitCode(t *testing.T, cmd *exec.Cmd, done chan error) int {
	t.Helper()
	select {
	case err := <-done:
		if ee, ok := err.(*exec.ExitError); ok {
			return ee.ExitCode()
		}
		if err != nil {
			t.Fatalf("wait: %v", err)
		}
		return 0
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("%v still running after 30 s", cmd.Args)
	}
	return -1
}
