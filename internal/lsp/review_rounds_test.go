package lsp_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"go.lsp.dev/protocol"

	"github.com/ioh-lsp/ioh-lsp/internal/lsp/lsptest"
)

// unticking is an editor whose preview applies nothing of an edit that
// needs confirmation (VS Code starts such edits unticked, and Apply on
// the defaults applies nothing) but applies a plain edit; its answers to
// the question after an unapplied review come from answer.
type unticking struct {
	mu     sync.Mutex
	f      *fixture
	sent   []protocol.WorkspaceEdit
	answer string // "" dismisses
	asked  []string
}

func (u *unticking) applyEdit(ctx context.Context, p *protocol.ApplyWorkspaceEditParams) (*protocol.ApplyWorkspaceEditResult, error) {
	u.mu.Lock()
	u.sent = append(u.sent, p.Edit)
	u.mu.Unlock()
	if len(p.Edit.ChangeAnnotations) > 0 {
		why := "nothing was ticked"
		return &protocol.ApplyWorkspaceEditResult{Applied: false, FailureReason: &why}, nil
	}
	return u.f.editor.Apply(ctx, p.Edit), nil
}

func (u *unticking) question(ctx context.Context, p *protocol.ShowMessageRequestParams) (*protocol.MessageActionItem, error) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if !strings.Contains(p.Message, "nothing was applied") {
		return nil, nil
	}
	var titles []string
	for _, a := range p.Actions {
		titles = append(titles, a.Title)
	}
	u.asked = append(u.asked, strings.Join(titles, "|"))
	if u.answer == "" {
		return nil, nil
	}
	return &protocol.MessageActionItem{Title: u.answer}, nil
}

// TestUnappliedReviewIsNeverRejectedSilently: an applyEdit answered
// applied: false that applied nothing asks Review again / Apply all /
// Reject; Apply all sends the same change without annotations (applied),
// Reject records rejected, and a dismissed question keeps the change
// pending, never rejected (issue 13 item 5).
func TestUnappliedReviewIsNeverRejectedSilently(t *testing.T) {
	tests := []struct {
		answer  string
		outcome string
		text    string
		sends   int
	}{
		{answer: "Apply all", outcome: "applied", text: "world\n", sends: 2},
		{answer: "Reject", outcome: "rejected", text: "hello\n", sends: 1},
		{answer: "", outcome: "awaiting_approval", text: "hello\n", sends: 1},
	}
	for _, tt := range tests {
		t.Run("answer "+tt.answer, func(t *testing.T) {
			u := &unticking{answer: tt.answer}
			f := newFixture(t, map[string]string{"a.txt": "hello\n"}, lsptest.Config{Hooks: lsptest.Hooks{ApplyEdit: u.applyEdit, ShowMessageRequest: u.question}})
			u.f = f
			ctx := f.ctx()
			id := f.start(ctx, "ioh.run", inline("greet", f.cassette(edit("a.txt", "hello", "world"), finish("done")), []string{"grep", "-q", "world", "a.txt"}))
			f.awaitEnd(ctx, id)
			if got := f.runsByID(ctx)[id].Outcome; got != tt.outcome {
				t.Fatalf("outcome %q, want %q", got, tt.outcome)
			}
			if got := f.read("a.txt"); got != tt.text {
				t.Errorf("a.txt = %q, want %q", got, tt.text)
			}
			u.mu.Lock()
			asked, sent := append([]string(nil), u.asked...), append([]protocol.WorkspaceEdit(nil), u.sent...)
			u.mu.Unlock()
			if len(asked) != 1 || asked[0] != "Review again|Apply all|Reject" {
				t.Errorf("questions after the unapplied review = %q, want one with Review again|Apply all|Reject", asked)
			}
			if len(sent) != tt.sends {
				t.Fatalf("%d edits sent, want %d", len(sent), tt.sends)
			}
			if tt.sends == 2 && len(sent[1].ChangeAnnotations) != 0 {
				t.Errorf("Apply all sent annotations: %+v", sent[1].ChangeAnnotations)
			}
			if tt.outcome == "awaiting_approval" {
				// Still pending: ioh.approve applies it, through the editor
				// (a plain edit), and the run is recorded applied.
				raw, err := f.editor.ExecuteCommand(ctx, "ioh.approve", map[string]string{"runId": id})
				if err != nil {
					t.Fatalf("ioh.approve of the pending change: %v", err)
				}
				if !strings.Contains(string(raw), `"applied"`) {
					t.Errorf("ioh.approve answered %s", raw)
				}
				if got := f.read("a.txt"); got != "world\n" {
					t.Errorf("after ioh.approve a.txt = %q", got)
				}
				u.mu.Lock()
				n := len(u.sent)
				u.mu.Unlock()
				if n != 2 {
					t.Errorf("%d edits sent in all, want the approval's plain edit as the second", n)
				}
				if got := f.runsByID(ctx)[id].Outcome; got != "applied" {
					t.Errorf("outcome after ioh.approve %q, want applied", got)
				}
			}
		})
	}
}

// TestUserTypingWhileReviewWaitsIsRebased: the user edits the open
// buffer (another line) after the change was computed, so the versioned
// edit fails; the change is rebased onto the user's text, verified again
// and sent again as one hunk; the buffer ends with both edits. The same
// line edited by both is a conflict that names both sides (issue 13
// item 3).
func TestUserTypingWhileReviewWaitsIsRebased(t *testing.T) {
	const orig = "line 1\nline 2\nline 3\nline 4\nline 5\n"
	tests := []struct {
		name     string
		user     protocol.TextEdit
		outcome  string
		buffer   string
		conflict string
	}{
		{name: "another line", user: protocol.TextEdit{Range: protocol.Range{Start: protocol.Position{Line: 1}, End: protocol.Position{Line: 1, Character: 6}}, NewText: "LINE TWO"},
			outcome: "applied", buffer: "line 1\nLINE TWO\nline 3\nline 4\nline five\n"},
		{name: "another line that fails a check", user: protocol.TextEdit{Range: protocol.Range{End: protocol.Position{Character: 6}}, NewText: "LINE ONE"},
			outcome: "rejected", buffer: "LINE ONE\nline 2\nline 3\nline 4\nline 5\n", conflict: "rebased onto your edits of a.txt, the change fails its checks"},
		{name: "the same line", user: protocol.TextEdit{Range: protocol.Range{Start: protocol.Position{Line: 4}, End: protocol.Position{Line: 4, Character: 6}}, NewText: "line 5!"},
			outcome: "rejected", buffer: "line 1\nline 2\nline 3\nline 4\nline 5!\n", conflict: `a.txt line 5: yours "line 5!", the agent's "line five"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var mu sync.Mutex
			var sent []protocol.WorkspaceEdit
			var f *fixture
			f = newFixture(t, map[string]string{"a.txt": orig}, lsptest.Config{Hooks: lsptest.Hooks{
				ApplyEdit: func(ctx context.Context, p *protocol.ApplyWorkspaceEditParams) (*protocol.ApplyWorkspaceEditResult, error) {
					mu.Lock()
					sent = append(sent, p.Edit)
					first := len(sent) == 1
					mu.Unlock()
					if first {
						// The user types while the review is on screen.
						if err := f.editor.EditFile(ctx, "a.txt", tt.user); err != nil {
							return nil, err
						}
					}
					return f.editor.Apply(ctx, p.Edit), nil
				},
			}})
			ctx := f.ctx()
			if err := f.editor.OpenFile(ctx, "a.txt"); err != nil {
				t.Fatal(err)
			}
			// The second check holds on the agent's text; a rebase onto a
			// first line the user changed breaks it.
			id := f.start(ctx, "ioh.run", inline("spell five", f.cassette(edit("a.txt", "line 5", "line five"), finish("done")),
				[]string{"grep", "-q", "line five", "a.txt"}, []string{"grep", "-qx", "line 1", "a.txt"}))
			f.awaitEnd(ctx, id)
			if got := f.runsByID(ctx)[id].Outcome; got != tt.outcome {
				t.Fatalf("outcome %q, want %q", got, tt.outcome)
			}
			if got, _ := f.editor.Text("a.txt"); got != tt.buffer {
				t.Errorf("buffer = %q, want %q", got, tt.buffer)
			}
			st := f.editor.Snapshot()
			var msgs []string
			for _, m := range st.Messages {
				msgs = append(msgs, m.Message)
			}
			all := strings.Join(msgs, "\n")
			mu.Lock()
			defer mu.Unlock()
			if tt.conflict != "" {
				if !strings.Contains(all, tt.conflict) {
					t.Errorf("messages lack the conflict %s:\n%s", tt.conflict, all)
				}
				if len(sent) != 1 {
					t.Errorf("%d edits sent, want 1 (the conflict is not sent again)", len(sent))
				}
				return
			}
			if !strings.Contains(all, "rebased onto your text and verified again") {
				t.Errorf("messages do not say the change was rebased and verified:\n%s", all)
			}
			if len(sent) != 2 {
				t.Fatalf("%d edits sent, want 2 (the first failed on the version)", len(sent))
			}
			var edits []protocol.TextDocumentEditElement
			for _, dc := range sent[1].DocumentChanges {
				if te, ok := dc.(*protocol.TextDocumentEdit); ok {
					edits = append(edits, te.Edits...)
				}
			}
			if len(edits) != 1 {
				t.Fatalf("rebased review has %d edits, want the one hunk", len(edits))
			}
			if ae, ok := edits[0].(*protocol.AnnotatedTextEdit); !ok || ae.NewText != "line five\n" || ae.Range.Start.Line != 4 || ae.Range.End.Line != 5 {
				t.Errorf("rebased edit = %#v, want line 5 only", edits[0])
			}
		})
	}
}

// TestPendingChangeTheEditorCannotCarryIsAppliedByTheHarness: a change
// left pending because the client cannot express it (a deletion without
// resourceOperations) is applied by the harness on ioh.approve, not sent
// to the editor again.
func TestPendingChangeTheEditorCannotCarryIsAppliedByTheHarness(t *testing.T) {
	yes := true
	caps := protocol.ClientCapabilities{Workspace: &protocol.WorkspaceClientCapabilities{
		ApplyEdit: &yes,
		WorkspaceEdit: &protocol.WorkspaceEditClientCapabilities{DocumentChanges: &yes,
			ChangeAnnotationSupport: &protocol.ChangeAnnotationsSupportOptions{}},
	}}
	f := newFixture(t, map[string]string{"old.txt": "bye\n"}, lsptest.Config{Capabilities: &caps})
	ctx := f.ctx()
	calls := f.cassette([]call{{Name: "delete_file", Args: map[string]any{"path": "old.txt"}}}, finish("deleted"))
	id := f.start(ctx, "ioh.run", inline("delete", calls, []string{"test", "!", "-e", "old.txt"}))
	if end := f.awaitEnd(ctx, id); !strings.Contains(end, "awaiting_approval") {
		t.Fatalf("end %q, want awaiting_approval", end)
	}
	raw, err := f.editor.ExecuteCommand(ctx, "ioh.approve", map[string]string{"runId": id})
	if err != nil || !strings.Contains(string(raw), `"applied"`) {
		t.Fatalf("ioh.approve = %s, %v; want applied", raw, err)
	}
	if n := len(f.editor.Snapshot().Edits); n != 0 {
		t.Errorf("%d edits sent that the client cannot apply", n)
	}
	if _, err := os.Stat(filepath.Join(f.dir, "old.txt")); !os.IsNotExist(err) {
		t.Errorf("old.txt still there: %v", err)
	}
}
