package main

import (
	"context"
	"io"
	"runtime"
	"strings"
	"testing"
	"time"
)

// TestCtrlCAtApprovalPrompt: Ctrl-C or SIGTERM (the command's context
// cancelled) while `run --approve ask` waits at its prompt on a terminal
// nobody types into ends the run at once: cancelled, exit 130, and the
// trace says so. Before, the read of the answer held the process until a
// line was typed.
func TestCtrlCAtApprovalPrompt(t *testing.T) {
	cas := `{"version":1,"turns":[{"tool_calls":[{"name":"write_file","arguments":{"path":"a.txt","content":"x\n"}}]},{"tool_calls":[{"name":"finish","arguments":{"summary":"done"}}]}]}`
	w := newBudgetWorld(t, map[string]string{"c.json": cas, "t.ioh.yaml": "version: 1\ngoal: write a\nbudget: {cost_usd: 0}\n"})
	t.Chdir(w.dir)
	stdin, typing := io.Pipe()
	defer typing.Close()
	var stderr lockedBuffer
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	runCtx, interrupt := context.WithCancel(ctx)
	code := make(chan int, 1)
	go func() {
		code <- dispatch(runCtx, &cliEnv{stdin: stdin, stdout: io.Discard, stderr: &stderr, getenv: w.getenv}, []string{"run", "t.ioh.yaml", "--approve", "ask", "--cassette", "c.json"})
	}()
	for !strings.Contains(stderr.String(), "[a]pply, [r]eject, or [d]efer?") {
		select {
		case c := <-code:
			t.Fatalf("the run ended (exit %d) before its prompt:\n%s", c, stderr.String())
		case <-ctx.Done():
			t.Fatalf("no prompt:\n%s", stderr.String())
		default:
			runtime.Gosched()
		}
	}
	interrupt()
	select {
	case c := <-code:
		if c != exitCancelled {
			t.Errorf("exit %d, want %d:\n%s", c, exitCancelled, stderr.String())
		}
	case <-ctx.Done():
		t.Fatalf("the run is still blocked on its prompt after the interrupt:\n%s", stderr.String())
	}
	id := runID(t, stderr.String())
	if got := w.runsJSON()[id]["outcome"]; got != "cancelled" {
		t.Errorf("runs says %v, want cancelled", got)
	}
}
