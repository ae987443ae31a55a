package main

import (
	"context"
	"strings"
	"testing"

	"github.com/ioh-lsp/ioh-lsp/internal/agent/trace"
)

// The command line acts on the stop reason the run recorded, never on
// its error text: a run its step budget stopped, its stored error text
// rewritten, is told to continue with --budget-steps by a plain resume
// in a later process (the run read back from the store), and its trace
// names the limit in the outcome event.
func TestRaiseHintIsTypedNotText(t *testing.T) {
	w := raiseWorld(t, "{steps: 2, tokens: 1000000, cost_usd: 1, wall: 1h}")
	code, _, errOut := w.cli("run", "task.ioh.yaml", "--approve", "never")
	if code != exitBudget {
		t.Fatalf("run: exit %d, want %d: %s", code, exitBudget, errOut)
	}
	id := runID(t, errOut)
	steps := "ioh-lsp resume " + id + " --budget-steps N"
	if !strings.Contains(errOut, steps) {
		t.Fatalf("run's hint %q: want %q", errOut, steps)
	}
	ctx := context.Background()
	s, err := trace.Open(ctx, trace.DBPath(w.env["IOH_STATE_DIR"], w.dir), nil)
	if err != nil {
		t.Fatal(err)
	}
	row, err := s.Run(ctx, id)
	if err == nil {
		err = s.SetOutcome(ctx, id, row.Outcome, row.Summary, "it ran out of room", row.State)
	}
	s.Close()
	if err != nil {
		t.Fatal(err)
	}
	code, _, errOut = w.cli("resume", id, "--approve", "never")
	if code != exitBudget || !strings.Contains(errOut, "(it ran out of room)") {
		t.Fatalf("plain resume of the rewritten run: exit %d, want %d and the new text: %s", code, exitBudget, errOut)
	}
	if !strings.Contains(errOut, steps) || strings.Contains(errOut, "--budget-tokens") {
		t.Errorf("plain resume's hint %q: want %q only, from the recorded limit", errOut, steps)
	}
	outs := w.traceEvents(id, "outcome")
	if len(outs) == 0 || outs[0]["limit"] != "steps" {
		t.Errorf("trace's outcome events %v: want limit steps", outs)
	}
}
