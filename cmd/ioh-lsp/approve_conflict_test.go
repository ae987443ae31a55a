package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestApproveConflictKeepsTheChange: the user edits the line of a pending
// change the agent changed before approving it. approve applies nothing,
// says so naming the line, exits 4 and leaves the change pending with the
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
	const mine = "line1\nline2 edited by hand\nline3\n"
	if err := os.WriteFile(a, []byte(mine), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errOut = w.cli("approve", id)
	if code != exitDeferred || !strings.Contains(errOut, "conflict on a.txt") || !strings.Contains(errOut, "a.txt: line 2") || !strings.Contains(errOut, "still pending") {
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

// TestApproveRebasesOntoUserEdits: the user edits another line of a file
// of a pending change (the line next to the agent's) before approving it.
// approve merges three-way, as the editor path does: both edits land, the
// trace says it rebased, and undo takes back exactly the agent's line,
// keeping the user's.
func TestApproveRebasesOntoUserEdits(t *testing.T) {
	cas := `{"version":1,"turns":[{"tool_calls":[{"name":"read_file","arguments":{"path":"a.txt"}}]},{"tool_calls":[{"name":"edit_file","arguments":{"path":"a.txt","old":"line2","new":"LINE2"}}]},{"tool_calls":[{"name":"finish","arguments":{"summary":"a"}}]}]}`
	w := newBudgetWorld(t, map[string]string{"cas.json": cas, "a.txt": "line1\nline2\nline3\n", "t.ioh.yaml": "version: 1\ngoal: edit\nbudget: {cost_usd: 0}\n"})
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
	if code, _, errOut = w.cli("approve", id); code != exitOK {
		t.Fatalf("approve after an edit elsewhere: exit %d, want 0 (rebased)\n%s", code, errOut)
	}
	if b, _ := os.ReadFile(a); string(b) != "line1 edited by hand\nLINE2\nline3\n" {
		t.Errorf("a.txt = %q, want both the user's and the agent's edit", b)
	}
	if _, tr, _ := w.cli("trace", id); !strings.Contains(tr, "rebased onto your edits") {
		t.Errorf("the trace does not record the rebase:\n%s", tr)
	}
	if code, _, errOut = w.cli("undo", id); code != exitOK {
		t.Fatalf("undo of the rebased change: exit %d\n%s", code, errOut)
	}
	if b, _ := os.ReadFile(a); string(b) != mine {
		t.Errorf("after undo a.txt = %q, want the user's text %q", b, mine)
	}
}
