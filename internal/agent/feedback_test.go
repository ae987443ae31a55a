package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/ioh-lsp/ioh-lsp/internal/agent/contain"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/contract"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/verify"
)

// eventSandbox answers every check with the same output and exit code.
type eventSandbox struct {
	out  string
	exit int
}

func (s eventSandbox) Exec(context.Context, *contain.Request) (*contain.Result, error) {
	return &contain.Result{ExitCode: s.exit, Output: []byte(s.out), Backend: "fake"}, nil
}

// goEvents is `go test -json` of n passing tests that each log a line and
// of the failing tests named in fail, each with one message.
func goEvents(pkg string, n int, fail map[string]string) string {
	var b strings.Builder
	ev := func(action, test, out string) {
		line, _ := json.Marshal(map[string]string{"Action": action, "Package": pkg, "Test": test, "Output": out})
		b.Write(append(line, '\n'))
	}
	for i := range n {
		name := fmt.Sprintf("TestChatty%03d", i)
		ev("run", name, "")
		ev("output", name, fmt.Sprintf("    chatty_test.go:%d: step %d ok\n", 10+i, i))
		ev("pass", name, "")
	}
	for name, msg := range fail {
		ev("run", name, "")
		ev("output", name, "    "+msg+"\n")
		ev("output", name, "--- FAIL: "+name+" (0.00s)\n")
		ev("fail", name, "")
	}
	ev("output", "", "FAIL\t"+pkg+"\t0.01s\n")
	return b.String()
}

func feedbackOf(t *testing.T, out string, checks ...contract.Check) string {
	t.Helper()
	f := newFixture(t, map[string]string{"go.mod": "module example.com/stats\n", "stats_test.go": "package stats\n", "chatty_test.go": "package stats\n"}, nil)
	v := contract.Verify{Checks: checks}
	rep, err := verify.RunWith(context.Background(), verify.Options{Sandbox: eventSandbox{out, 1}, Root: f.root.Dir(), Verify: v})
	if err != nil {
		t.Fatal(err)
	}
	return failureText(rep, v)
}

// TestFailureTextChattySuite: a 300-test suite that logs a line per test
// with one failing TestMean: the feedback names TestMean's file:line and
// its message and no passing test's log line, in at most 4 KB (it was
// 34 KB, 300 locations on passing tests' log lines and no assertion).
func TestFailureTextChattySuite(t *testing.T) {
	unit := contract.Check{Name: "unit", Run: []string{"go", "test", "./..."}}
	events := goEvents("example.com/stats", 300, map[string]string{"TestMean": "stats_test.go:12: Mean([1 2 3 4]) = 2, want 2.5"})
	fb := feedbackOf(t, events, unit)
	t.Logf("feedback: %d bytes\n%s", len(fb), fb)
	if os.Getenv("IOH_BENCH") != "" { // bench/verify.sh; the old feedback was 34 KB
		fmt.Printf("FIGURE chatty_feedback_bytes=%d chatty_events_bytes=%d feedback_per_event_byte=%.4f\n", len(fb), len(events), float64(len(fb))/float64(len(events)))
	}
	if len(fb) > 4096 || !strings.Contains(fb, "stats_test.go:12: Mean([1 2 3 4]) = 2, want 2.5") || !strings.Contains(fb, "FAIL TestMean (example.com/stats)") {
		t.Errorf("feedback (%d bytes):\n%s", len(fb), fb)
	}
	if strings.Contains(fb, "step ") {
		t.Errorf("a passing test's log line is in the feedback:\n%s", fb)
	}
}

// TestFailureTextBoundedWithManyFailures: 200 failing tests: the feedback
// stays within 4 KB and says how many tests it left out and how to see
// them with run.
func TestFailureTextBoundedWithManyFailures(t *testing.T) {
	fail := map[string]string{}
	for i := range 200 {
		fail[fmt.Sprintf("TestBroken%03d", i)] = fmt.Sprintf("stats_test.go:%d: case %d: got 1, want 2", i+1, i)
	}
	unit := contract.Check{Name: "unit", Run: []string{"go", "test", "./..."}}
	fb := feedbackOf(t, goEvents("example.com/stats", 10, fail), unit)
	if len(fb) > 4096 || !strings.Contains(fb, "more failing tests") || !strings.Contains(fb, "see them with run: argv go test ./...") {
		t.Errorf("feedback (%d bytes) does not say what it left out:\n%s", len(fb), fb)
	}
}
