package lsp_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"go.lsp.dev/protocol"

	"github.com/ioh-lsp/ioh-lsp/internal/agent/event"
	"github.com/ioh-lsp/ioh-lsp/internal/lsp"
	"github.com/ioh-lsp/ioh-lsp/internal/lsp/lsptest"
)

// staleApplier is an editor that behaves like VS Code's Refactor Preview:
// the versioned edit's version is checked when the edit arrives, the user
// then types a line at the top of the file and saves, and Apply puts the
// edits at their original positions into the changed text and answers
// applied: true. Later edits (the restore, the review sent again) apply
// as a careful editor does.
type staleApplier struct {
	mu     sync.Mutex
	f      *fixture
	rel    string
	typing string // inserted before the first edit lands; "" types nothing
	at     uint32 // the line typing is inserted at
	answer string // the answer to the mismatch question
	sent   []protocol.WorkspaceEdit
	asked  []protocol.ShowMessageRequestParams
}

func (a *staleApplier) applyEdit(ctx context.Context, p *protocol.ApplyWorkspaceEditParams) (*protocol.ApplyWorkspaceEditResult, error) {
	a.mu.Lock()
	a.sent = append(a.sent, p.Edit)
	first := len(a.sent) == 1
	a.mu.Unlock()
	if !first || a.typing == "" {
		return a.f.editor.Apply(ctx, p.Edit), nil
	}
	// The preview is open: the version was checked now, so the edit is
	// applied later whatever the buffer's version then.
	if err := a.f.editor.EditFile(ctx, a.rel, protocol.TextEdit{Range: protocol.Range{Start: protocol.Position{Line: a.at}, End: protocol.Position{Line: a.at}}, NewText: a.typing}); err != nil {
		return nil, err
	}
	if err := a.f.editor.SaveFile(ctx, a.rel); err != nil {
		return nil, err
	}
	stale := p.Edit
	stale.DocumentChanges = nil
	for _, dc := range p.Edit.DocumentChanges {
		if te, ok := dc.(*protocol.TextDocumentEdit); ok {
			c := *te
			c.TextDocument.Version = nil
			dc = &c
		}
		stale.DocumentChanges = append(stale.DocumentChanges, dc)
	}
	return a.f.editor.Apply(ctx, stale), nil
}

func (a *staleApplier) question(ctx context.Context, p *protocol.ShowMessageRequestParams) (*protocol.MessageActionItem, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.asked = append(a.asked, *p)
	if !strings.Contains(p.Message, "landed on a changed file") {
		return nil, nil
	}
	return &protocol.MessageActionItem{Title: a.answer}, nil
}

// TestStaleEditAppliedOverUserTypingIsNotRecordedApplied: the editor
// applies the review's hunks at their old lines after the user typed a
// line at the top, and says applied: true. The server reads the result
// back, finds it is not the verified change, never records applied, and
// asks; "Restore my text and review again" puts back the user's text and
// sends the change rebased onto it (the buffer ends with both), "Keep as
// is" leaves the run awaiting approval, both with an apply_mismatch
// event in the trace. Controls: without the typing, or with typing
// below the change (the stale hunk still lands right), the run is
// applied with one edit and no question.
func TestStaleEditAppliedOverUserTypingIsNotRecordedApplied(t *testing.T) {
	const orig = "package stats\n\n// Mean is the average of xs.\nfunc Mean(xs []float64) float64 {\n\treturn 0\n}\n"
	const agent = "package stats\n\n// Mean is the average of xs.\nfunc Mean(xs []float64) float64 {\n\treturn total(xs) / float64(len(xs))\n}\n"
	const typed = "// Package stats is small.\n"
	tests := []struct {
		name     string
		typing   string
		at       uint32
		answer   string
		outcome  string
		buffer   string
		sends    int
		mismatch string // the apply_mismatch event's answer; "" none
	}{
		{name: "restore and review again", typing: typed, answer: "Restore my text and review again", outcome: "applied",
			buffer: typed + agent, sends: 3, mismatch: "Restore my text and review again"},
		{name: "keep as is", typing: typed, answer: "Keep as is", outcome: "awaiting_approval",
			// The stale hunk replaced the doc comment's old line (now the
			// func line): the file is corrupt, as the editor left it.
			buffer: typed + "package stats\n\n// Mean is the average of xs.\n\treturn total(xs) / float64(len(xs))\n\treturn 0\n}\n", sends: 1, mismatch: "Keep as is"},
		{name: "control: no typing", outcome: "applied", buffer: agent, sends: 1},
		// Typing below the hunk shifts nothing: the stale edit lands
		// where it belongs, the file holds the change and the user's line.
		{name: "typing below the change", typing: typed, at: 6, outcome: "applied", buffer: agent + typed, sends: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := &staleApplier{rel: "stats.go", typing: tt.typing, at: tt.at, answer: tt.answer}
			f := newFixture(t, map[string]string{"stats.go": orig}, lsptest.Config{Hooks: lsptest.Hooks{ApplyEdit: a.applyEdit, ShowMessageRequest: a.question}})
			a.f = f
			ctx := f.ctx()
			if err := f.editor.OpenFile(ctx, "stats.go"); err != nil {
				t.Fatal(err)
			}
			id := f.start(ctx, "ioh.run", inline("mean", f.cassette(edit("stats.go", "return 0", "return total(xs) / float64(len(xs))"), finish("done")),
				[]string{"grep", "-q", "return total", "stats.go"}))
			f.awaitEnd(ctx, id)
			if got := f.runsByID(ctx)[id].Outcome; got != tt.outcome {
				t.Errorf("outcome %q, want %q", got, tt.outcome)
			}
			if got, _ := f.editor.Text("stats.go"); got != tt.buffer {
				t.Errorf("buffer = %q\nwant     %q", got, tt.buffer)
			}
			a.mu.Lock()
			sent, asked := len(a.sent), append([]protocol.ShowMessageRequestParams(nil), a.asked...)
			a.mu.Unlock()
			if sent != tt.sends {
				t.Errorf("%d edits sent, want %d", sent, tt.sends)
			}
			var mismatchQs []protocol.ShowMessageRequestParams
			for _, q := range asked {
				if strings.Contains(q.Message, "landed on a changed file") {
					mismatchQs = append(mismatchQs, q)
				}
			}
			var events []string
			for _, ev := range f.events(ctx, id, lsp.EventApplyMismatch) {
				events = append(events, ev.Payload.(*event.ApplyMismatch).Answer)
			}
			if tt.mismatch == "" {
				if len(mismatchQs) != 0 || len(events) != 0 {
					t.Errorf("control run reported a mismatch: questions %v, events %v", mismatchQs, events)
				}
				return
			}
			if len(mismatchQs) != 1 {
				t.Fatalf("%d mismatch questions, want 1 (asked: %+v)", len(mismatchQs), asked)
			}
			q := mismatchQs[0]
			if q.Type != protocol.MessageTypeError || !strings.Contains(q.Message, "stats.go") || !strings.Contains(q.Message, "NOT the verified change") {
				t.Errorf("mismatch question = %+v", q)
			}
			var titles []string
			for _, act := range q.Actions {
				titles = append(titles, act.Title)
			}
			if strings.Join(titles, "|") != "Restore my text and review again|Keep as is" {
				t.Errorf("mismatch actions = %q", titles)
			}
			if len(events) != 1 || events[0] != tt.mismatch {
				t.Errorf("apply_mismatch events = %q, want one answered %q", events, tt.mismatch)
			}
		})
	}
}

// events are the run's trace events of one type.
func (f *fixture) events(ctx context.Context, id, typ string) []event.Event {
	f.t.Helper()
	e := f.harness(ctx, nil)
	defer e.Close()
	evs, err := e.Store.Events(ctx, id)
	if err != nil {
		f.t.Fatal(err)
	}
	var out []event.Event
	for _, ev := range evs {
		if ev.Type == typ {
			out = append(out, ev)
		}
	}
	return out
}
