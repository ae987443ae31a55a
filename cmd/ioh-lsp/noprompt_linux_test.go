package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestAskWithoutATerminal: `run --approve ask` with stdin /dev/null or a
// pipe closed at once prints no prompt nobody can answer: the change is
// left pending (exit 4) and stderr says how to approve it later. Control:
// on a pseudo-terminal the prompt is shown and the answer typed applies
// the change (exit 0).
func TestAskWithoutATerminal(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := buildBinary(t)
	const prompt = "[a]pply, [r]eject, or [d]efer?"
	for _, stdin := range []string{"/dev/null", "closed pipe"} {
		dir, env := newCrashWorkspace(t)
		cmd := exec.Command(bin, "run", "task.ioh.yaml", "--approve", "ask")
		var errb strings.Builder
		cmd.Dir, cmd.Env, cmd.Stderr = dir, append(env, "IOH_TEST_MODEL_DELAY=0s"), &errb
		if stdin == "closed pipe" {
			r, w, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			w.Close()
			defer r.Close()
			cmd.Stdin = r
		}
		err := cmd.Run()
		code := cmd.ProcessState.ExitCode()
		if err != nil && code < 0 {
			t.Fatal(err)
		}
		if code != exitDeferred || strings.Contains(errb.String(), prompt) || !strings.Contains(errb.String(), "ioh-lsp approve --last") {
			t.Errorf("stdin %s: exit %d, want 4 with no prompt and the way to approve:\n%s", stdin, code, errb.String())
		}
		if b, _ := os.ReadFile(filepath.Join(dir, "main.go")); string(b) != crashMain {
			t.Errorf("stdin %s: the change was applied", stdin)
		}
	}

	ptmx, tty := openPty(t)
	dir, env := newCrashWorkspace(t)
	cmd := exec.Command(bin, "run", "task.ioh.yaml", "--approve", "ask")
	var errb strings.Builder
	cmd.Dir, cmd.Env, cmd.Stdin, cmd.Stderr = dir, append(env, "IOH_TEST_MODEL_DELAY=0s"), tty, &errb
	if _, err := ptmx.Write([]byte("a\n")); err != nil {
		t.Fatal(err)
	}
	go func() { // drain the echo so the terminal never blocks
		buf := make([]byte, 512)
		for {
			if _, err := ptmx.Read(buf); err != nil {
				return
			}
		}
	}()
	if err := cmd.Run(); err != nil {
		t.Fatalf("on a terminal: %v\n%s", err, errb.String())
	}
	if !strings.Contains(errb.String(), prompt) {
		t.Errorf("on a terminal: no prompt:\n%s", errb.String())
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "main.go")); string(b) == crashMain {
		t.Errorf("on a terminal: the answer did not apply the change:\n%s", errb.String())
	}
}
