package sandbox

import (
	"bufio"
	"bytes"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// pid1Signals are the signals that crashed the Go runtime of PID 1 when
// the command sent them, and the rest the command can send.
var pid1Signals = []string{"SEGV", "BUS", "ABRT", "ILL", "FPE", "TRAP", "SYS", "QUIT", "TERM", "INT", "HUP", "USR1", "USR2", "PIPE", "ALRM", "XCPU", "XFSZ", "VTALRM", "PROF", "TSTP", "TTIN", "TTOU", "STOP", "KILL", "CONT", "CHLD", "WINCH", "URG", "IO", "PWR", "STKFLT"}

func TestContainPID1Signals(t *testing.T) {
	requireLinuxBackend(t)
	h := helperPath(t)
	// One run sends them all (a run costs more than a kill); the first
	// one PID 1 did not survive would end the run with 137.
	script := "for s in " + strings.Join(pid1Signals, " ") + "; do kill -$s 1; done; sleep 0.2; exit 4"
	out, output := run(t, Spec{Argv: []string{"sh", "-c", script}})
	if out.ExitCode != 4 || out.Signal != "" {
		t.Errorf("exit %d signal %q, want the command's own exit 4; output:\n%s", out.ExitCode, out.Signal, output)
	}
	if strings.Contains(output, "goroutine") {
		t.Errorf("PID 1 dumped its stack:\n%s", output)
	}
	// Control: the same signal ends an ordinary process of this binary
	// (the Go runtime it shares with PID 1) with a stack dump.
	t.Run("control", func(t *testing.T) {
		for _, sig := range []syscall.Signal{syscall.SIGSEGV, syscall.SIGABRT, syscall.SIGSYS} {
			var buf bytes.Buffer
			cmd := exec.Command(h, helperArg, "sleep", "30")
			cmd.Stderr = &buf
			stdout, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			if line, err := bufio.NewReader(stdout).ReadString('\n'); line != "ready\n" {
				cmd.Process.Kill()
				t.Fatalf("helper did not start: %q %v", line, err)
			}
			_ = cmd.Process.Signal(sig)
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			select {
			case err := <-done:
				if err == nil || !strings.Contains(buf.String(), "goroutine") {
					t.Errorf("%v: uncontained process survived or left no stack dump (%v): %s", sig, err, buf.String())
				}
			case <-time.After(20 * time.Second):
				cmd.Process.Kill()
				t.Fatalf("%v: uncontained process did not end", sig)
			}
		}
	})
}
