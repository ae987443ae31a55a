package lsp_test

import (
	"fmt"
	"strings"
	"testing"

	"go.lsp.dev/protocol"

	"github.com/ioh-lsp/ioh-lsp/internal/lsp/lsptest"
)

// TestFailedCheckDiagnosticsAtTheFailingTest: a failed check puts its
// Error on the failing test's own assertion, with the test's name and
// message, and none on the log lines of the passing tests around it (the
// parser used to mark every passing test's t.Log line and not the
// failure).
func TestFailedCheckDiagnosticsAtTheFailingTest(t *testing.T) {
	var chatty strings.Builder
	chatty.WriteString("package stats\n\nimport \"testing\"\n\n")
	for i := range 30 {
		fmt.Fprintf(&chatty, "func TestChatty%02d(t *testing.T) { t.Log(\"step %d ok\") }\n", i, i)
	}
	f := newFixture(t, map[string]string{
		"go.mod":         "module example.com/stats\n\ngo 1.22\n",
		"stats.go":       "package stats\n\nfunc Mean(xs []int) float64 {\n\ts := 0\n\tfor _, x := range xs {\n\t\ts += x\n\t}\n\treturn float64(s / len(xs))\n}\n",
		"stats_test.go":  "package stats\n\nimport \"testing\"\n\nfunc TestMean(t *testing.T) {\n\tif got := Mean([]int{1, 2, 3, 4}); got != 2.5 {\n\t\tt.Errorf(\"Mean([1 2 3 4]) = %v, want 2.5\", got)\n\t}\n}\n",
		"chatty_test.go": chatty.String(),
	}, lsptest.Config{})
	ctx := f.ctx()
	id := f.start(ctx, "ioh.run", inline("fix Mean", f.cassette(finish("nothing"), finish("nothing"), finish("nothing")), []string{"go", "test", "./..."}))
	f.awaitEnd(ctx, id)
	uri := f.editor.URI("stats_test.go")
	st, err := f.editor.Await(ctx, "check diagnostic", func(s lsptest.State) bool { return len(s.Diagnostics[uri]) > 0 })
	if err != nil {
		t.Fatal(err)
	}
	var errs []protocol.Diagnostic
	for _, d := range st.Diagnostics[uri] {
		if d.Severity == protocol.DiagnosticSeverityError {
			errs = append(errs, d)
		}
	}
	if len(errs) != 1 {
		t.Fatalf("stats_test.go errors = %+v, want one", errs)
	}
	msg := string(errs[0].Message.(protocol.String))
	if errs[0].Range.Start.Line != 6 || !strings.Contains(msg, "TestMean (example.com/stats)") || !strings.Contains(msg, "want 2.5") {
		t.Errorf("the check's diagnostic is at line %d: %q", errs[0].Range.Start.Line+1, msg)
	}
	if d := st.Diagnostics[f.editor.URI("chatty_test.go")]; len(d) > 0 {
		t.Errorf("passing tests' log lines got %d diagnostics, first %q", len(d), d[0].Message)
	}
}

// TestPreflightShownInTheEditor: under red/green, a check whose program is
// missing is said to the user as a warning (before the first model call),
// naming the program, not left to look like a failing test.
func TestPreflightShownInTheEditor(t *testing.T) {
	f := newFixture(t, map[string]string{"a.txt": "a\n"}, lsptest.Config{})
	ctx := f.ctx()
	arg := inline("fix it", f.cassette(finish("nothing"), finish("nothing"), finish("nothing")), []string{"no-such-runner-xyz", "--all"})
	arg["inline"].(map[string]any)["verify"].(map[string]any)["red_green"] = true
	id := f.start(ctx, "ioh.run", arg)
	_, err := f.editor.Await(ctx, "preflight warning", func(s lsptest.State) bool {
		for _, m := range s.Messages {
			if m.Type == protocol.MessageTypeWarning && strings.Contains(m.Message, "ioh run "+id) && strings.Contains(m.Message, "program not found: no-such-runner-xyz") {
				return true
			}
		}
		return false
	})
	if err != nil {
		t.Fatal(err)
	}
	f.awaitEnd(ctx, id)
}
