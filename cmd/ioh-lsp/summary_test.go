package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ioh-lsp/ioh-lsp/internal/agent"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/verify"
)

// TestSummaryCarriesTheEvidence: run's summary (stderr and --json) says
// which tests failed before and pass after, which check is exit code
// only, and why a change waits for a human.
func TestSummaryCarriesTheEvidence(t *testing.T) {
	rep := &verify.Report{Passed: true, Proves: true, TouchesChecks: []string{"adds extra_test.go, a test file"}, Checks: []verify.CheckResult{
		{Name: "unit", Phase: verify.PhaseRed, Evidence: verify.EvidenceGoTest, ExitCode: 1},
		{Name: "unit", Phase: verify.PhaseGreen, Passed: true, Evidence: verify.EvidenceGoTest,
			Tests: &verify.TestSummary{Ran: 2, Passed: 2}, Fixed: []string{"TestMean (example.com/stats)"}},
		{Name: "lint", Phase: verify.PhaseGreen, Passed: true, Evidence: verify.EvidenceExitCode},
	}}
	res := &agent.Result{RunID: "r-1", Outcome: agent.OutcomeAwaitingApproval, Report: rep, Pending: true}
	var stderr, stdout strings.Builder
	(&cliSink{stderr: &stderr, stdout: &stdout}).summary(res, 4)
	for _, want := range []string{
		"  unit: passed (go test -json, 2 tests ran); failed before, pass now: TestMean (example.com/stats)\n",
		"  lint: passed (exit code only)\n",
		"the change touches its own checks, so it waits for a human review:\n  adds extra_test.go, a test file\n",
	} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr.String())
		}
	}
	var sum struct {
		Checks        []summaryCheck `json:"checks"`
		TouchesChecks []string       `json:"touches_checks"`
		ExitCode      int            `json:"exit_code"`
	}
	if err := json.Unmarshal([]byte(stdout.String()), &sum); err != nil {
		t.Fatalf("summary %q: %v", stdout.String(), err)
	}
	want := []summaryCheck{
		{Name: "unit", Passed: true, Evidence: "go test -json", Tests: &verify.TestSummary{Ran: 2, Passed: 2}, Fixed: []string{"TestMean (example.com/stats)"}},
		{Name: "lint", Passed: true, Evidence: "exit code only"},
	}
	if diff := cmp.Diff(sum.Checks, want); diff != "" {
		t.Errorf("checks (-got +want):\n%s", diff)
	}
	if len(sum.TouchesChecks) != 1 || sum.ExitCode != 4 {
		t.Errorf("touches_checks %v, exit_code %d", sum.TouchesChecks, sum.ExitCode)
	}
}
