package main

import (
	"strings"
	"testing"
)

// TestResumeWithTheSameBudgetChangesNothing: resume --budget-steps N with
// N the run's limit already is no raise: the run stays budget_exceeded
// (exit 3) and its trace is as it was (it appended a budget_raised from 1
// to 1 and another outcome). Control: a real raise is recorded and the
// run goes on.
func TestResumeWithTheSameBudgetChangesNothing(t *testing.T) {
	cas := `{"version":1,"turns":[{"tool_calls":[{"name":"write_file","arguments":{"path":"a.txt","content":"x\n"}}]},{"tool_calls":[{"name":"finish","arguments":{"summary":"x"}}]}]}`
	w := newBudgetWorld(t, map[string]string{"c.json": cas, "t.ioh.yaml": "version: 1\ngoal: g\nbudget: {steps: 1, cost_usd: 0}\n"})
	code, _, errOut := w.cli("run", "t.ioh.yaml", "--approve", "never", "--cassette", "c.json")
	if code != exitBudget {
		t.Fatalf("run exit %d, want %d\n%s", code, exitBudget, errOut)
	}
	id := runID(t, errOut)
	_, before, _ := w.cli("trace", id, "--json")
	code, _, errOut = w.cli("resume", id, "--budget-steps", "1", "--approve", "never", "--cassette", "c.json")
	if code != exitBudget {
		t.Errorf("resume with the same limit: exit %d, want %d\n%s", code, exitBudget, errOut)
	}
	if _, after, _ := w.cli("trace", id, "--json"); after != before {
		t.Errorf("the trace changed without a raise:\nbefore:\n%s\nafter:\n%s", before, after)
	}
	code, _, errOut = w.cli("resume", id, "--budget-steps", "3", "--approve", "never", "--cassette", "c.json")
	if code != exitOK {
		t.Errorf("control: resume with a raise: exit %d\n%s", code, errOut)
	}
	if _, after, _ := w.cli("trace", id, "--json"); !strings.Contains(after, `"type":"budget_raised"`) {
		t.Errorf("control: the raise is not in the trace:\n%s", after)
	}
}
