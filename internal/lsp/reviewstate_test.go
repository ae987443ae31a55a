package lsp_test

import (
	"context"
	"encoding/json"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"go.lsp.dev/protocol"
	"go.lsp.dev/uri"

	"github.com/ioh-lsp/ioh-lsp/internal/agent/event"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/trace"
	"github.com/ioh-lsp/ioh-lsp/internal/lsp/lsptest"
	"github.com/ioh-lsp/ioh-lsp/internal/wire"
)

// held is an applyEdit hook that never answers: the review waits, as it
// does while a person reads VS Code's Refactor Preview.
type held struct{ sent chan struct{} }

func (h *held) applyEdit(ctx context.Context, _ *protocol.ApplyWorkspaceEditParams) (*protocol.ApplyWorkspaceEditResult, error) {
	select {
	case h.sent <- struct{}{}:
	default:
	}
	<-ctx.Done()
	return nil, ctx.Err()
}

// TestWaitingReviewIsAwaitingReviewNotRunning: while the editor shows a
// verified change, its progress says "awaiting review", ioh.runs and the
// trace store (what `ioh-lsp runs` reads from another process) say
// awaiting_approval; the editor closing before the answer leaves it
// awaiting_approval, never cancelled, and a new session applies it.
func TestWaitingReviewIsAwaitingReviewNotRunning(t *testing.T) {
	h := &held{sent: make(chan struct{}, 1)}
	f := newFixture(t, map[string]string{"a.txt": "hello\n"}, lsptest.Config{Hooks: lsptest.Hooks{ApplyEdit: h.applyEdit}})
	ctx := f.ctx()
	id := f.start(ctx, "ioh.run", inline("greet", f.cassette(edit("a.txt", "hello", "world"), finish("greeted")), []string{"grep", "-q", "world", "a.txt"}))
	select {
	case <-h.sent:
	case <-ctx.Done():
		t.Fatal("the change never reached the editor")
	}
	token := "ioh/" + id
	if _, err := f.editor.Await(ctx, "an awaiting review report", func(s lsptest.State) bool {
		ps := s.Progress[token]
		return len(ps) > 0 && strings.HasPrefix(ps[len(ps)-1].Message, "awaiting review: ")
	}); err != nil {
		t.Fatal(err)
	}
	if r := f.runsByID(ctx)[id]; r.Outcome != "awaiting_approval" {
		t.Errorf("ioh.runs says %q while the review waits, want awaiting_approval", r.Outcome)
	}
	store := openStore(t, ctx, f)
	row, err := store.Run(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if got := row.Shown(time.Now()); got != "awaiting_approval" {
		t.Errorf("the store shows %q while the review waits (stored %q), want awaiting_approval", got, row.Outcome)
	}

	if err := f.editor.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	for row.Outcome == "running" { // the closed session records the run's end
		if ctx.Err() != nil {
			t.Fatalf("the run is still stored %q after the editor closed", row.Outcome)
		}
		time.Sleep(20 * time.Millisecond)
		if row, err = store.Run(ctx, id); err != nil {
			t.Fatal(err)
		}
	}
	f.editor = lsptest.Start(t, newWireServer(f.state), lsptest.Config{Root: f.dir})
	if outcome := f.runsByID(ctx)[id].Outcome; outcome != "awaiting_approval" {
		t.Fatalf("after the editor closed the run is %q, want awaiting_approval (its change can still be applied)", outcome)
	}
	if _, err := f.editor.ExecuteCommand(ctx, "ioh.approve", map[string]string{"runId": id}); err != nil {
		t.Fatalf("ioh.approve in a new session: %v", err)
	}
	if got := f.read("a.txt"); got != "world\n" {
		t.Errorf("a.txt after approve = %q", got)
	}
}

// editedDiags are the ioh diagnostics of an applied edit on rel.
func editedDiags(s lsptest.State, u uri.URI, run string) []protocol.Diagnostic {
	var out []protocol.Diagnostic
	for _, d := range s.Diagnostics[u] {
		if strings.Contains(string(d.Message.(protocol.String)), "run "+run) {
			out = append(out, d)
		}
	}
	return out
}

// TestTraceDiagnosticsGoWhenTheirTextChanges: the Information on an
// applied edit's line moves with a line typed above it and goes when the
// user changes that line.
func TestTraceDiagnosticsGoWhenTheirTextChanges(t *testing.T) {
	f := newFixture(t, map[string]string{"a.txt": "one\ntwo\nthree\n"}, lsptest.Config{})
	ctx := f.ctx()
	id := f.start(ctx, "ioh.run", inline("shout two", f.cassette(edit("a.txt", "two", "TWO"), finish("shouted")), []string{"grep", "-q", "TWO", "a.txt"}))
	if end := f.awaitEnd(ctx, id); !strings.Contains(end, "applied") {
		t.Fatalf("run ended %q", end)
	}
	u := f.editor.URI("a.txt")
	at := func(line uint32) func(lsptest.State) bool {
		return func(s lsptest.State) bool {
			ds := editedDiags(s, u, id)
			return len(ds) == 1 && ds[0].Range.Start.Line == line
		}
	}
	if _, err := f.editor.Await(ctx, "the edit's diagnostic on line 2", at(1)); err != nil {
		t.Fatal(err)
	}
	if err := f.editor.OpenFile(ctx, "a.txt"); err != nil {
		t.Fatal(err)
	}
	top := protocol.Range{}
	if err := f.editor.EditFile(ctx, "a.txt", protocol.TextEdit{Range: top, NewText: "zero\n"}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.editor.Await(ctx, "the diagnostic moved to line 3 with its text", at(2)); err != nil {
		t.Fatal(err)
	}
	line := protocol.Range{Start: protocol.Position{Line: 2}, End: protocol.Position{Line: 2, Character: 3}}
	if err := f.editor.EditFile(ctx, "a.txt", protocol.TextEdit{Range: line, NewText: "two"}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.editor.Await(ctx, "no diagnostic on the reverted line", func(s lsptest.State) bool { return len(editedDiags(s, u, id)) == 0 }); err != nil {
		t.Fatal(err)
	}
}

// TestNewerRunReplacesTheDiagnosticsOfItsTask: a second run of the same
// task clears the first one's trace diagnostics; a run of another task
// leaves them (the control).
func TestNewerRunReplacesTheDiagnosticsOfItsTask(t *testing.T) {
	f := newFixture(t, map[string]string{"a.txt": "one\ntwo\n", "b.txt": "bee\n"}, lsptest.Config{})
	ctx := f.ctx()
	first := f.start(ctx, "ioh.run", inline("shout two", f.cassette(edit("a.txt", "two", "TWO"), finish("shouted")), []string{"grep", "-q", "TWO", "a.txt"}))
	f.awaitEnd(ctx, first)
	u := f.editor.URI("a.txt")
	if _, err := f.editor.Await(ctx, "the first run's diagnostic", func(s lsptest.State) bool { return len(editedDiags(s, u, first)) == 1 }); err != nil {
		t.Fatal(err)
	}
	other := f.start(ctx, "ioh.run", inline("buzz", f.cassette(edit("b.txt", "bee", "BEE"), finish("buzzed")), []string{"grep", "-q", "BEE", "b.txt"}))
	f.awaitEnd(ctx, other)
	if n := len(editedDiags(f.editor.Snapshot(), u, first)); n != 1 {
		t.Fatalf("a run of another task left %d of the first run's diagnostics, want 1", n)
	}
	again := f.start(ctx, "ioh.run", inline("shout two", f.cassette(finish("nothing left to do")), []string{"grep", "-q", "TWO", "a.txt"}))
	f.awaitEnd(ctx, again)
	if _, err := f.editor.Await(ctx, "the first run's diagnostic replaced", func(s lsptest.State) bool { return len(editedDiags(s, u, first)) == 0 }); err != nil {
		t.Fatal(err)
	}
}

// TestRefusedStartMarksTheTaskFileLine: a task file that cannot start
// gets an Error on the line at fault (a cassette outside the workspace; a
// contract error at its line:col) besides ioh.run's error; fixing the line
// removes it.
func TestRefusedStartMarksTheTaskFileLine(t *testing.T) {
	outside := t.TempDir() + "/elsewhere.json"
	task := "version: 1\ngoal: greet\nmodel:\n  provider: replay\n  cassette: " + outside + "\n"
	bad := "version: 1\ngoal: greet\nbudget:\n  steps: many\n"
	f := newFixture(t, map[string]string{"greet.ioh.yaml": task, "bad.ioh.yaml": bad}, lsptest.Config{})
	ctx := f.ctx()
	for _, tt := range []struct {
		file string
		line uint32
		want string
	}{{"greet.ioh.yaml", 4, "cassette"}, {"bad.ioh.yaml", 3, "steps"}} {
		_, err := f.editor.ExecuteCommand(ctx, "ioh.run", map[string]string{"contract": string(f.editor.URI(tt.file))})
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Fatalf("ioh.run %s answered %v, want an error naming %s", tt.file, err, tt.want)
		}
		u := f.editor.URI(tt.file)
		st, err := f.editor.Await(ctx, "the refusal on "+tt.file, func(s lsptest.State) bool { return len(s.Diagnostics[u]) > 0 })
		if err != nil {
			t.Fatal(err)
		}
		d := st.Diagnostics[u][0]
		if d.Range.Start.Line != tt.line || d.Severity != protocol.DiagnosticSeverityError || d.Code != protocol.String("run-refused") ||
			!strings.Contains(string(d.Message.(protocol.String)), tt.want) {
			t.Errorf("%s: diagnostic %+v, want an Error run-refused on line %d naming %s", tt.file, d, tt.line+1, tt.want)
		}
	}
	if err := f.editor.OpenFile(ctx, "bad.ioh.yaml"); err != nil {
		t.Fatal(err)
	}
	fix := protocol.Range{Start: protocol.Position{Line: 3, Character: 9}, End: protocol.Position{Line: 3, Character: 13}}
	if err := f.editor.EditFile(ctx, "bad.ioh.yaml", protocol.TextEdit{Range: fix, NewText: "5"}); err != nil {
		t.Fatal(err)
	}
	u := f.editor.URI("bad.ioh.yaml")
	if _, err := f.editor.Await(ctx, "the refusal gone once its line changed", func(s lsptest.State) bool { return len(s.Diagnostics[u]) == 0 }); err != nil {
		t.Fatal(err)
	}
}

// TestPartlyAcceptedChangeIsRecorded: the editor applies one of the two
// hunks of a file (a user unticking the other in a preview). The run is
// applied, not a mismatch; the trace's partial_apply event names the
// applied and the dropped hunk; the file holds only the applied one and
// the edit diagnostics mark only it.
func TestPartlyAcceptedChangeIsRecorded(t *testing.T) {
	const orig = "a\nb\nc\nd\ne\nf\ng\n"
	var editor *lsptest.Editor
	firstOnly := func(ctx context.Context, p *protocol.ApplyWorkspaceEditParams) (*protocol.ApplyWorkspaceEditResult, error) {
		we := p.Edit
		for _, dc := range we.DocumentChanges {
			if td, ok := dc.(*protocol.TextDocumentEdit); ok && len(td.Edits) > 1 {
				td.Edits = td.Edits[:1]
			}
		}
		return editor.Apply(ctx, we), nil
	}
	f := newFixture(t, map[string]string{"a.txt": orig}, lsptest.Config{Hooks: lsptest.Hooks{ApplyEdit: firstOnly}})
	editor = f.editor
	ctx := f.ctx()
	calls := [][]call{edit("a.txt", "b\n", "B\n"), edit("a.txt", "f\n", "F\n"), finish("two hunks")}
	id := f.start(ctx, "ioh.run", inline("shout", f.cassette(calls...), []string{"grep", "-q", "F", "a.txt"}))
	if end := f.awaitEnd(ctx, id); !strings.Contains(end, "applied") {
		t.Fatalf("run ended %q, want applied", end)
	}
	if got := f.read("a.txt"); got != "a\nB\nc\nd\ne\nf\ng\n" {
		t.Fatalf("a.txt = %q, want only the first hunk", got)
	}
	store := openStore(t, ctx, f)
	evs, err := store.Events(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	var pa *event.PartialApply
	for _, e := range evs {
		if e.Type == event.TypeApplyMismatch {
			t.Errorf("a partly accepted change was recorded as a mismatch: %+v", e.Payload)
		}
		if e.Type == event.TypePartialApply {
			pa, _ = e.Payload.(*event.PartialApply)
			if pa == nil {
				var m struct{ Files []event.PartialFile }
				b, _ := json.Marshal(e)
				_ = json.Unmarshal(b, &m)
				pa = &event.PartialApply{Files: m.Files}
			}
		}
	}
	want := []event.PartialFile{{Path: "a.txt", Applied: []event.HunkNote{{Line: 2, Lines: 1, New: "B"}}, Dropped: []event.HunkNote{{Line: 6, Lines: 1, New: "F"}}}}
	if pa == nil || !reflect.DeepEqual(pa.Files, want) {
		t.Errorf("partial_apply = %+v, want %+v", pa, want)
	}
	u := f.editor.URI("a.txt")
	if _, err := f.editor.Await(ctx, "the edit diagnostic on the applied hunk only", func(s lsptest.State) bool {
		ds := editedDiags(s, u, id)
		return len(ds) == 1 && ds[0].Range.Start.Line == 1
	}); err != nil {
		t.Fatal(err)
	}
	// Undo (what `ioh-lsp undo` calls) reverts the applied hunk; the
	// dropped one was never there.
	eng, err := wire.NewHarness(ctx, wire.Options{Root: f.dir, Getenv: stateEnv(f.state), Environ: func() []string { return nil }})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	if _, err := eng.Harness.Undo(ctx, id); err != nil {
		t.Fatalf("undo of the partly applied change: %v", err)
	}
	if got := f.read("a.txt"); got != orig {
		t.Errorf("a.txt after undo = %q, want %q", got, orig)
	}
}

// stateEnv is the environment of the fixture's state directory.
func stateEnv(state string) func(string) string {
	return func(k string) string {
		if k == "IOH_STATE_DIR" {
			return state
		}
		return os.Getenv(k)
	}
}

// openStore opens the fixture's trace store beside the server, as another
// process (the CLI) would.
func openStore(t *testing.T, ctx context.Context, f *fixture) *trace.Store {
	t.Helper()
	store, err := wire.OpenStore(ctx, f.dir, stateEnv(f.state), func() []string { return nil })
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	return store
}
