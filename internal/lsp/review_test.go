package lsp_test

import (
	"context"
	"strings"
	"testing"

	"go.lsp.dev/protocol"

	"github.com/ioh-lsp/ioh-lsp/internal/lsp/lsptest"
)

// TestHeldProposalShowsItTouchesItsChecks: a change that edits the script
// its check runs is held with the mark and the evidence on the held
// diagnostics (as a warning), a lens and the question; a change that does not
// touch its check is held as information (the control).
func TestHeldProposalShowsItTouchesItsChecks(t *testing.T) {
	for _, tt := range []struct {
		name    string
		touches bool
	}{{"touches the check script", true}, {"control: code only", false}} {
		t.Run(tt.name, func(t *testing.T) {
			caps := lsptest.PlainCapabilities()
			questions := make(chan string, 4)
			release := make(chan struct{}) // the question is answered once the lenses were read
			f := newFixture(t, map[string]string{"a.txt": "hello\n", "check.sh": "grep -q world a.txt\n"}, lsptest.Config{
				Capabilities: &caps,
				Hooks: lsptest.Hooks{ShowMessageRequest: func(ctx context.Context, p *protocol.ShowMessageRequestParams) (*protocol.MessageActionItem, error) {
					questions <- p.Message
					select {
					case <-release:
					case <-ctx.Done():
					}
					return &protocol.MessageActionItem{Title: "Reject"}, nil
				}},
			})
			ctx := f.ctx()
			calls := [][]call{edit("a.txt", "hello", "world")}
			if tt.touches {
				calls = append(calls, edit("check.sh", "grep -q", "# checks the greeting\ngrep -q"))
			}
			calls = append(calls, finish("greet the world"))
			id := f.start(ctx, "ioh.run", inline("greet", f.cassette(calls...), []string{"sh", "check.sh"}))
			uri := f.editor.URI("a.txt")
			st, err := f.editor.Await(ctx, "held diagnostic", func(s lsptest.State) bool { return len(s.Diagnostics[uri]) > 0 })
			if err != nil {
				t.Fatal(err)
			}
			d := st.Diagnostics[uri][0]
			msg := string(d.Message.(protocol.String))
			if !strings.Contains(msg, "evidence: check1: passed (exit code only)") {
				t.Errorf("held diagnostic lacks the evidence: %q", msg)
			}
			marked := strings.Contains(msg, "REVIEW CAREFULLY: it touches its own checks, so it waits for your review: check check1: the change set modifies check.sh, the script sh runs")
			if marked != tt.touches || (d.Severity == protocol.DiagnosticSeverityWarning) != tt.touches {
				t.Errorf("held diagnostic (severity %v) marked %v, want %v: %q", d.Severity, marked, tt.touches, msg)
			}
			var q string
			select {
			case q = <-questions:
			case <-ctx.Done():
				t.Fatal("no question about the held proposal")
			}
			if strings.Contains(q, "REVIEW CAREFULLY") != tt.touches || !strings.Contains(q, "evidence: check1") {
				t.Errorf("question %q", q)
			}
			lenses, err := f.editor.CodeLenses(ctx, "a.txt")
			if err != nil {
				t.Fatal(err)
			}
			var titles []string
			for _, l := range lenses {
				titles = append(titles, l.Command.Title)
			}
			if !strings.Contains(strings.Join(titles, "|"), "✓ Apply") {
				t.Errorf("lenses %q: the held proposal has no Apply lens", titles)
			}
			if got := strings.Contains(strings.Join(titles, "|"), "⚠ Changes its own checks: review carefully"); got != tt.touches {
				t.Errorf("lenses %q: mark shown %v, want %v", titles, got, tt.touches)
			}
			close(release)
			if end := f.awaitEnd(ctx, id); !strings.Contains(end, "rejected") {
				t.Errorf("end %q, want rejected", end)
			}
		})
	}
}
