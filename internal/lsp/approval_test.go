package lsp_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.lsp.dev/protocol"

	"github.com/ioh-lsp/ioh-lsp/internal/lsp/lsptest"
)

func TestRunAppliesOneAnnotatedEditGroupedByPurpose(t *testing.T) {
	f := newFixture(t, map[string]string{
		"calc.go":      "package calc\n\nfunc Add(a, b int) int { return a - b }\n",
		"calc_test.go": "package calc\n\n// TODO\n",
		"Makefile":     "all:\n\techo hi\n",
	}, lsptest.Config{})
	ctx := f.ctx()
	if err := f.editor.OpenFile(ctx, "calc.go"); err != nil {
		t.Fatal(err)
	}
	cas := f.cassette(
		edit("calc.go", "a - b", "a + b"),
		edit("calc_test.go", "// TODO", "// tested"),
		edit("Makefile", "echo hi", "echo hello"),
		finish("Add adds"),
	)
	id := f.start(ctx, "ioh.run", inline("make Add add", cas, []string{"grep", "-q", "a + b", "calc.go"}))
	if end := f.awaitEnd(ctx, id); !strings.HasPrefix(end, "completed: applied") {
		t.Fatalf("run ended %q, want completed: applied", end)
	}
	st := f.editor.Snapshot()
	if len(st.Edits) != 1 {
		t.Fatalf("got %d applyEdit requests, want exactly one", len(st.Edits))
	}
	we := st.Edits[0].Edit
	gotLabels := map[string]bool{}
	for _, a := range we.ChangeAnnotations {
		if a.NeedsConfirmation == nil || !*a.NeedsConfirmation {
			t.Errorf("annotation %q does not need confirmation", a.Label)
		}
		if a.Description == nil || !strings.Contains(*a.Description, id) {
			t.Errorf("annotation %q has no description naming the run", a.Label)
		}
		gotLabels[a.Label] = true
	}
	// calc_test.go is a test file: the change touches its own checks, so
	// it sits in a group of its own that says why.
	want := map[string]bool{"Implementation": true, "Changes its own checks: review carefully": true, "Runs code on your machine: review carefully": true}
	if diff := cmp.Diff(gotLabels, want); diff != "" {
		t.Errorf("annotation groups (-got +want):\n%s", diff)
	}
	self, ok := we.ChangeAnnotations["ioh.touches-checks"]
	if !ok || self.Description == nil || !strings.Contains(*self.Description, "edits calc_test.go, a test file") {
		t.Errorf("the touches-checks group does not say why: %+v", self)
	}
	for _, a := range we.ChangeAnnotations {
		if a.Description == nil || !strings.Contains(*a.Description, "evidence: check1: passed (exit code only)") {
			t.Errorf("annotation %q does not carry the evidence: %s", a.Label, *a.Description)
		}
	}
	// The open document gets a versioned edit; every edit is annotated
	// with a defined annotation.
	for _, dc := range we.DocumentChanges {
		tde, ok := dc.(*protocol.TextDocumentEdit)
		if !ok {
			continue
		}
		if strings.HasSuffix(string(tde.TextDocument.URI), "/calc.go") && tde.TextDocument.Version == nil {
			t.Error("edit to the open calc.go is not versioned")
		}
		for _, el := range tde.Edits {
			a, ok := el.(*protocol.AnnotatedTextEdit)
			if !ok {
				t.Errorf("unannotated edit in %s", tde.TextDocument.URI)
				continue
			}
			if _, ok := we.ChangeAnnotations[a.AnnotationID]; !ok {
				t.Errorf("annotation %q not defined", a.AnnotationID)
			}
		}
	}
	// The open buffer changed in the editor; the other files on disk.
	if got, _ := f.editor.Text("calc.go"); !strings.Contains(got, "a + b") {
		t.Errorf("calc.go buffer = %q", got)
	}
	if got := f.read("Makefile"); !strings.Contains(got, "echo hello") {
		t.Errorf("Makefile = %q", got)
	}
	// Trace diagnostics: Information at the edited line naming run, step
	// and tool.
	diags := st.Diagnostics[f.editor.URI("calc.go")]
	if len(diags) != 1 {
		t.Fatalf("calc.go diagnostics = %v, want one", diags)
	}
	d := diags[0]
	msg := string(d.Message.(protocol.String))
	if src, _ := d.Source.Get(); src != "ioh" || d.Severity != protocol.DiagnosticSeverityInformation || d.Range.Start.Line != 2 ||
		!strings.Contains(msg, "run "+id) || !strings.Contains(msg, "step 1: edit_file") {
		t.Errorf("edit diagnostic = %+v (%s)", d, msg)
	}
	runs := f.runsByID(ctx)
	if r := runs[id]; r.Outcome != "applied" || r.Steps != 4 || r.Tokens == 0 || r.Goal != "make Add add" {
		t.Errorf("ioh.runs entry = %+v", r)
	}
}

// heldFixture is a client without annotation support whose
// showMessageRequest answers come from answer (nil: dismiss).
func heldFixture(t *testing.T, answer func(p *protocol.ShowMessageRequestParams) string) *fixture {
	caps := lsptest.PlainCapabilities()
	return newFixture(t, map[string]string{"a.txt": "hello\n"}, lsptest.Config{
		Capabilities: &caps,
		Hooks: lsptest.Hooks{ShowMessageRequest: func(ctx context.Context, p *protocol.ShowMessageRequestParams) (*protocol.MessageActionItem, error) {
			if title := answer(p); title != "" {
				return &protocol.MessageActionItem{Title: title}, nil
			}
			return nil, nil
		}},
	})
}

func TestHeldProposalAppliedFromTheLensWithAPlainEdit(t *testing.T) {
	f := heldFixture(t, func(*protocol.ShowMessageRequestParams) string { return "" })
	ctx := f.ctx()
	id := f.start(ctx, "ioh.run", inline("greet", f.cassette(edit("a.txt", "hello", "world"), finish("done")), []string{"grep", "-q", "world", "a.txt"}))
	// The proposal is held: a diagnostic and lenses on the file, and the
	// question with Apply / Show diff / Reject.
	uri := f.editor.URI("a.txt")
	st, err := f.editor.Await(ctx, "held diagnostic", func(s lsptest.State) bool { return len(s.Diagnostics[uri]) > 0 })
	if err != nil {
		t.Fatal(err)
	}
	if msg := string(st.Diagnostics[uri][0].Message.(protocol.String)); !strings.Contains(msg, "pending review") {
		t.Errorf("held diagnostic = %q", msg)
	}
	if _, err := f.editor.Await(ctx, "apply question", func(s lsptest.State) bool { return len(s.Requests) > 0 }); err != nil {
		t.Fatal(err)
	}
	var titles []string
	for _, a := range f.editor.Snapshot().Requests[0].Actions {
		titles = append(titles, a.Title)
	}
	if diff := cmp.Diff(titles, []string{"Apply", "Show diff", "Reject"}); diff != "" {
		t.Errorf("question actions (-got +want):\n%s", diff)
	}
	lenses, err := f.editor.CodeLenses(ctx, "a.txt")
	if err != nil {
		t.Fatal(err)
	}
	var lensCmds []string
	for _, l := range lenses {
		lensCmds = append(lensCmds, l.Command.Command)
	}
	if diff := cmp.Diff(lensCmds, []string{"ioh.approve", "ioh.showDiff", "ioh.reject"}); diff != "" {
		t.Errorf("lenses (-got +want):\n%s", diff)
	}
	actions, err := f.editor.CodeActions(ctx, "a.txt", protocol.Range{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, prefix := range []string{"Apply", "Show diff", "Reject"} {
		if _, ok := lsptest.FindAction(actions, prefix); !ok {
			t.Errorf("no %q code action on the held file", prefix)
		}
	}
	// Show diff, then Apply through the lens command.
	raw, err := f.editor.ExecuteCommand(ctx, lenses[1].Command.Command, json.RawMessage(lenses[1].Command.Arguments[0]))
	if err != nil || !strings.Contains(string(raw), "+world") {
		t.Fatalf("show diff = %s, %v", raw, err)
	}
	raw, err = f.editor.ExecuteCommand(ctx, lenses[0].Command.Command, json.RawMessage(lenses[0].Command.Arguments[0]))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(raw), `"applied"`) {
		t.Errorf("approve answered %s", raw)
	}
	st = f.editor.Snapshot()
	if len(st.Edits) != 1 || len(st.Edits[0].Edit.ChangeAnnotations) != 0 {
		t.Fatalf("want one plain edit, got %+v", st.Edits)
	}
	if got := f.read("a.txt"); got != "world\n" {
		t.Errorf("a.txt = %q", got)
	}
	if end := f.awaitEnd(ctx, id); !strings.Contains(end, "applied") {
		t.Errorf("end %q", end)
	}
}

func TestHeldProposalRejectedFromTheQuestion(t *testing.T) {
	f := heldFixture(t, func(p *protocol.ShowMessageRequestParams) string { return "Reject" })
	ctx := f.ctx()
	id := f.start(ctx, "ioh.run", inline("greet", f.cassette(edit("a.txt", "hello", "world"), finish("done")), []string{"grep", "-q", "world", "a.txt"}))
	if end := f.awaitEnd(ctx, id); !strings.Contains(end, "rejected") {
		t.Fatalf("end %q, want rejected", end)
	}
	if got := f.read("a.txt"); got != "hello\n" {
		t.Errorf("a.txt = %q, want untouched", got)
	}
	if n := len(f.editor.Snapshot().Edits); n != 0 {
		t.Errorf("%d edits sent for a rejected proposal", n)
	}
}

func TestConflictingProposalIsNeverApplied(t *testing.T) {
	f := heldFixture(t, func(*protocol.ShowMessageRequestParams) string { return "" })
	ctx := f.ctx()
	id := f.start(ctx, "ioh.run", inline("greet", f.cassette(edit("a.txt", "hello", "world"), finish("done")), []string{"grep", "-q", "world", "a.txt"}))
	if _, err := f.editor.Await(ctx, "apply question", func(s lsptest.State) bool { return len(s.Requests) > 0 }); err != nil {
		t.Fatal(err)
	}
	// The user edits the file while the proposal waits.
	if err := f.editor.OpenFile(ctx, "a.txt"); err != nil {
		t.Fatal(err)
	}
	if err := f.editor.EditFile(ctx, "a.txt", protocol.TextEdit{Range: protocol.Range{End: protocol.Position{Character: 5}}, NewText: "howdy"}); err != nil {
		t.Fatal(err)
	}
	_, err := f.editor.ExecuteCommand(ctx, "ioh.approve", map[string]string{"runId": id})
	if err == nil || !strings.Contains(err.Error(), "conflict") {
		t.Fatalf("approve = %v, want a conflict", err)
	}
	if n := len(f.editor.Snapshot().Edits); n != 0 {
		t.Errorf("%d edits sent for a conflicting proposal", n)
	}
	if got, _ := f.editor.Text("a.txt"); got != "howdy\n" {
		t.Errorf("buffer = %q, want the user's text", got)
	}
	if end := f.awaitEnd(ctx, id); !strings.Contains(end, "rejected") {
		t.Errorf("end %q, want rejected (conflict)", end)
	}
}

func TestCreatedAndDeletedFilesUseResourceOperations(t *testing.T) {
	f := newFixture(t, map[string]string{"old.txt": "bye\n", "keep.txt": "k\n"}, lsptest.Config{})
	ctx := f.ctx()
	calls := f.cassette(
		[]call{{Name: "write_file", Args: map[string]any{"path": "docs/new.txt", "content": "hi\n"}}},
		[]call{{Name: "delete_file", Args: map[string]any{"path": "old.txt"}}},
		finish("moved the greeting"),
	)
	id := f.start(ctx, "ioh.run", inline("move greeting", calls, []string{"test", "-f", "docs/new.txt"}))
	if end := f.awaitEnd(ctx, id); !strings.HasPrefix(end, "completed: applied") {
		t.Fatalf("end %q", end)
	}
	var kinds []string
	for _, dc := range f.editor.Snapshot().Edits[0].Edit.DocumentChanges {
		switch c := dc.(type) {
		case *protocol.CreateFile:
			kinds = append(kinds, "create "+filepath.Base(c.URI.FsPath())+" "+string(c.AnnotationID))
		case *protocol.DeleteFile:
			kinds = append(kinds, "delete "+filepath.Base(c.URI.FsPath())+" "+string(c.AnnotationID))
		case *protocol.TextDocumentEdit:
			kinds = append(kinds, "edit "+filepath.Base(c.TextDocument.URI.FsPath()))
		}
	}
	want := []string{"create new.txt ioh.implementation", "edit new.txt", "delete old.txt ioh.implementation"}
	if diff := cmp.Diff(kinds, want); diff != "" {
		t.Errorf("document changes (-got +want):\n%s", diff)
	}
	if got := f.read("docs/new.txt"); got != "hi\n" {
		t.Errorf("docs/new.txt = %q", got)
	}
	if _, err := os.Stat(filepath.Join(f.dir, "old.txt")); !os.IsNotExist(err) {
		t.Errorf("old.txt still there: %v", err)
	}
}

func TestDeletionWithoutResourceOperationsIsDeferred(t *testing.T) {
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
	if n := len(f.editor.Snapshot().Edits); n != 0 {
		t.Errorf("%d edits sent that the client cannot apply", n)
	}
	if got := f.read("old.txt"); got != "bye\n" {
		t.Errorf("old.txt = %q", got)
	}
}
