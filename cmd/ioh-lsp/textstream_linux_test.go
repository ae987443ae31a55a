package main

import (
	"strings"
	"testing"
	"time"
)

// TestStreamedTextOnTerminal: while text streams (with a pause longer
// than the status line's redraw between two pieces) the status line is
// not drawn over it: the turn's text stands whole on its line.
func TestStreamedTextOnTerminal(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := buildBinary(t)
	m := &streamingModel{pieces: []string{"I will read ", "the task ", "file."}, pause: 1500 * time.Millisecond}
	dir, env := streamingWorkspace(t, m, "TERM=xterm-256color", "NO_COLOR=1")
	code, shown := runOnTerminal(t, bin, dir, env, "run", "task.ioh.yaml", "--approve", "never")
	if code != 0 {
		t.Fatalf("exit %d\n%q", code, shown)
	}
	if !strings.Contains(shown, "step 1: I will read the task file.\r\n") {
		t.Errorf("the streamed text was broken up on the terminal:\n%q", shown)
	}
	if !strings.Contains(shown, "\r\x1b[K") {
		t.Errorf("no status line at all (the test proves nothing):\n%q", shown)
	}
}
