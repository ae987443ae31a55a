package main

import (
	"strings"
	"testing"
)

// TestRunsSaysAPendingChangeAwaitsReview: `runs` names a run whose
// verified change waits as awaiting review with the commands that answer
// it; an applied run gets no such line (the control).
func TestRunsSaysAPendingChangeAwaitsReview(t *testing.T) {
	cas := `{"version":1,"turns":[{"tool_calls":[{"name":"edit_file","arguments":{"path":"a.txt","old":"one","new":"ONE"}}]},{"tool_calls":[{"name":"finish","arguments":{"summary":"a"}}]}]}`
	w := newBudgetWorld(t, map[string]string{"cas.json": cas, "a.txt": "one\n", "t.ioh.yaml": "version: 1\ngoal: edit\nbudget: {cost_usd: 0}\nverify: {checks: [{name: t, run: [grep, -q, ONE, a.txt]}]}\n"})
	code, _, errOut := w.cli("run", "t.ioh.yaml", "--approve", "never", "--cassette", "cas.json")
	if code != exitOK {
		t.Fatalf("run exit %d\n%s", code, errOut)
	}
	pending := runID(t, errOut)
	code, _, errOut = w.cli("run", "t.ioh.yaml", "--approve", "auto", "--cassette", "cas.json")
	if code != exitOK {
		t.Fatalf("run exit %d\n%s", code, errOut)
	}
	applied := runID(t, errOut)
	_, out, _ := w.cli("runs")
	want := pending + " is awaiting review: ioh-lsp diff " + pending + ", then ioh-lsp approve " + pending + " or ioh-lsp reject " + pending
	if !strings.Contains(out, want) {
		t.Errorf("runs does not say %q:\n%s", want, out)
	}
	if strings.Contains(out, applied+" is awaiting") {
		t.Errorf("runs says the applied run %s awaits something:\n%s", applied, out)
	}
}
