package acp

import (
	"strings"
	"testing"

	"github.com/ioh-lsp/ioh-lsp/internal/agent/event"
)

// TestCheckToolCallNamesTheFailingTest: a failing check's tool call shows
// the failing test at its own location with its message, and a flaky
// test and a preflight problem in words.
func TestCheckToolCallNamesTheFailingTest(t *testing.T) {
	tr := newTranslator(nil, false)
	c := &event.CheckRun{Check: "unit", Phase: "green", ExitCode: 1, Backend: "linux",
		Locations:     []event.Location{{Path: "stats_test.go", Line: 7, Message: "Mean([1 2 3 4]) = 2, want 2.5", Test: "TestMean (example.com/stats)"}},
		CheckEvidence: event.CheckEvidence{Evidence: "go test -json", Flaky: []string{"TestSum (example.com/stats)"}}}
	out := tr.verification(event.Event{Run: "r-1"}, c)
	u, ok := out[0].(toolCall)
	if !ok || len(u.Content) != 1 {
		t.Fatalf("update %#v", out[0])
	}
	text := u.Content[0].Content.Text
	for _, want := range []string{"Failed: TestMean (example.com/stats) at stats_test.go:7: Mean([1 2 3 4]) = 2, want 2.5", "Flaky: TestSum (example.com/stats) failed, then passed on rerun"} {
		if !strings.Contains(text, want) {
			t.Errorf("tool call content %q lacks %q", text, want)
		}
	}
	red := &event.CheckRun{Check: "unit", Phase: "red", ExitCode: 127, CheckEvidence: event.CheckEvidence{Preflight: "check unit cannot run: program not found: pytest (exit 127)"}}
	u = tr.verification(event.Event{Run: "r-1"}, red)[0].(toolCall)
	if len(u.Content) != 1 || !strings.Contains(u.Content[0].Content.Text, "Cannot run: check unit cannot run: program not found: pytest") {
		t.Errorf("red tool call %#v does not say the program is missing", u.Content)
	}
}
