package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestApproveConflictKeepsTheChange: the user edits a file of a pending
// change (another line than the agent's) before approving it. approve
// applies nothing, says so, exits 4 and leaves the change pending with the
// conflict in the trace (it recorded approved, then rejected, and lost
// the change); with the file back as the agent read it, the same approve
// applies it (control).
func TestApproveConflictKeepsTheChange(t *testing.T) {
	cas := `{"version":1,"turns":[{"tool_calls":[{"name":"read_file","arguments":{"path":"a.txt"}}]},{"tool_calls":[{"name":"edit_file","arguments":{"path":"a.txt","old":"line2","new":"LINE2"}}]},{"tool_calls":[{"name":"finish","arguments":{"summary":"a"}}]}]}`
	const orig = "line1\nline2\nline3\n"
	w := newBudgetWorld(t, map[string]string{"cas.json": cas, "a.txt": orig, "t.ioh.yaml": "version: 1\ngoal: edit\nbudget: {cost_usd: 0}\n"})
	code, _, errOut := w.cli("run", "t.ioh.yaml", "--approve", "never", "--cassette", "cas.json")
	if code != exitOK {
		t.Fatalf("run exit %d\n%s", code, errOut)
	}
	id := runID(t, errOut)
	a := filepath.Join(w.dir, "a.txt")
	const mine = "line1 edited by hand\nline2\nline3\n"
	if err := os.WriteFile(a, []byte(mine), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errOut = w.cli("approve", id)
	if code != exitDeferred || !strings.Contains(errOut, "conflict on a.txt") || !strings.Contains(errOut, "still pending") {
		t.Errorf("approve with a conflict: exit %d, want %d naming the conflict:\n%s", code, exitDeferred, errOut)
	}
	if b, _ := os.ReadFile(a); string(b) != mine {
		t.Errorf("a.txt = %q, want the user's edit kept", b)
	}
	if got := w.runsJSON()[id]["outcome"]; got != "awaiting_approval" {
		t.Errorf("after the conflict the run is %v, want awaiting_approval", got)
	}
	_, tr, _ := w.cli("trace", id)
	if !strings.Contains(tr, "conflict on a.txt") {
		t.Errorf("the trace does not record the conflict:\n%s", tr)
	}
	if err := os.WriteFile(a, []byte(orig), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, errOut = w.cli("approve", id); code != exitOK {
		t.Errorf("approve once resolved: exit %d\n%s", code, errOut)
	}
	if b, _ := os.ReadFile(a); string(b) != "line1\nLINE2\nline3\n" {
		t.Errorf("a.txt = %q, want the agent's change applied", b)
	}
}
