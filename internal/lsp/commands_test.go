package lsp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.lsp.dev/protocol"

	"github.com/ioh-lsp/ioh-lsp/internal/lsp/lsptest"
)

func TestRunTaskFileFromLensAndCodeAction(t *testing.T) {
	f := newFixture(t, map[string]string{"a.txt": "hello\n"}, lsptest.Config{})
	ctx := f.ctx()
	cas := f.cassette(edit("a.txt", "hello", "world"), finish("greeted"))
	task := "version: 1\ngoal: greet the world\nverify:\n  - name: says-world\n    run: [grep, -q, world, a.txt]\n"
	// A task file from the workspace may not choose its provider: the
	// replay model comes from the editor settings.
	if err := os.WriteFile(filepath.Join(f.dir, "greet.ioh.yaml"), []byte(task), 0o644); err != nil {
		t.Fatal(err)
	}
	f.editor = lsptest.Start(t, newServerFor(f), lsptest.Config{Root: f.dir, Settings: map[string]any{
		"model": map[string]any{"provider": "replay", "name": "test", "cassette": cas},
	}})
	if err := f.editor.OpenFile(ctx, "greet.ioh.yaml"); err != nil {
		t.Fatal(err)
	}
	lenses, err := f.editor.CodeLenses(ctx, "greet.ioh.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if len(lenses) != 1 || lenses[0].Command.Command != "ioh.run" {
		t.Fatalf("task file lenses = %+v, want one ioh.run", lenses)
	}
	actions, err := f.editor.CodeActions(ctx, "greet.ioh.yaml", protocol.Range{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	run, ok := lsptest.FindAction(actions, "Run task")
	if !ok {
		t.Fatalf("no Run task action in %v", actions)
	}
	if run.Command.Command != "" {
		t.Error("listing attached the command; it should wait for codeAction/resolve")
	}
	raw, err := f.editor.ApplyCodeAction(ctx, run)
	if err != nil {
		t.Fatal(err)
	}
	var ref struct{ RunID string }
	if err := json.Unmarshal(raw, &ref); err != nil || ref.RunID == "" {
		t.Fatalf("Run task answered %s", raw)
	}
	if end := f.awaitEnd(ctx, ref.RunID); !strings.HasPrefix(end, "completed: applied") {
		t.Fatalf("end %q", end)
	}
	if got := f.read("a.txt"); got != "world\n" {
		t.Errorf("a.txt = %q", got)
	}
	// Lens through the command, with a path argument this time.
	if _, err := f.editor.RunID(ctx, lenses[0].Command.Command, json.RawMessage(lenses[0].Command.Arguments[0])); err != nil {
		t.Fatal(err)
	}
}

func TestFixWithAgentAndAskUseTheDiagnosticAndSelection(t *testing.T) {
	f := newFixture(t, map[string]string{"main.py": "print(1/0)\nx = 2\n"}, lsptest.Config{})
	ctx := f.ctx()
	cas := f.cassette(edit("main.py", "1/0", "1/1"), finish("no division by zero"))
	f.editor = lsptest.Start(t, newServerFor(f), lsptest.Config{Root: f.dir, Settings: map[string]any{
		"model": map[string]any{"provider": "replay", "name": "test", "cassette": cas},
	}})
	if err := f.editor.OpenFile(ctx, "main.py"); err != nil {
		t.Fatal(err)
	}
	diag := protocol.Diagnostic{
		Range:    protocol.Range{Start: protocol.Position{Line: 0, Character: 6}, End: protocol.Position{Line: 0, Character: 9}},
		Severity: protocol.DiagnosticSeverityError,
		Source:   protocol.NewOptional("pyright"),
		Message:  protocol.String("division by zero"),
	}
	sel := protocol.Range{Start: protocol.Position{Line: 0}, End: protocol.Position{Line: 1, Character: 5}}
	actions, err := f.editor.CodeActions(ctx, "main.py", sel, []protocol.Diagnostic{diag})
	if err != nil {
		t.Fatal(err)
	}
	var titles []string
	for _, a := range actions {
		titles = append(titles, a.Title)
	}
	if diff := cmp.Diff(titles, []string{"Fix with agent: division by zero", "Ask agent about selection"}); diff != "" {
		t.Errorf("actions (-got +want):\n%s", diff)
	}
	fix, _ := lsptest.FindAction(actions, "Fix with agent")
	resolved, err := f.editor.Server().CodeActionResolve(ctx, fix)
	if err != nil {
		t.Fatal(err)
	}
	var arg struct {
		Goal string `json:"goal"`
		URI  string `json:"uri"`
	}
	if err := json.Unmarshal(resolved.Command.Arguments[0], &arg); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"pyright", "division by zero", "main.py", "line 1"} {
		if !strings.Contains(arg.Goal, want) {
			t.Errorf("fix goal %q does not name %q", arg.Goal, want)
		}
	}
	if resolved.Command.Command != "ioh.ask" || arg.URI != string(f.editor.URI("main.py")) {
		t.Errorf("resolved command = %s %+v", resolved.Command.Command, arg)
	}
	id, err := f.editor.RunID(ctx, resolved.Command.Command, json.RawMessage(resolved.Command.Arguments[0]))
	if err != nil {
		t.Fatal(err)
	}
	// No manifest: no checks, so the change is applied unverified only
	// after the editor's review.
	end := f.awaitEnd(ctx, id)
	if !strings.Contains(end, "applied") && !strings.Contains(end, "unverified") {
		t.Fatalf("end %q", end)
	}
	r := f.runsByID(ctx)[id]
	if !strings.Contains(r.Goal, "File: main.py") || !strings.Contains(r.Goal, "division by zero") {
		t.Errorf("run goal = %q", r.Goal)
	}
}

func TestOrderingUnder200RapidChanges(t *testing.T) {
	f := newFixture(t, map[string]string{"notes.txt": ""}, lsptest.Config{})
	ctx := f.ctx()
	cas := f.cassette([]call{{Name: "read_file", Args: map[string]any{"path": "notes.txt"}}}, finish("read"))
	f.editor = lsptest.Start(t, newServerFor(f), lsptest.Config{Root: f.dir, Settings: map[string]any{
		"model": map[string]any{"provider": "replay", "name": "test", "cassette": cas},
	}})
	if err := f.editor.OpenFile(ctx, "notes.txt"); err != nil {
		t.Fatal(err)
	}
	var want strings.Builder
	for i := 0; i < 200; i++ {
		line := fmt.Sprintf("line %03d é😀\n", i) // multi-byte and surrogate pairs
		pos := protocol.Position{Line: uint32(i)}
		if err := f.editor.EditFile(ctx, "notes.txt", protocol.TextEdit{Range: protocol.Range{Start: pos, End: pos}, NewText: line}); err != nil {
			t.Fatal(err)
		}
		want.WriteString(line)
	}
	// Replace the middle of line 100 (after the emoji) in the same stream.
	mid := protocol.Position{Line: 100, Character: uint32(len("line 100 é")) + 2}
	if err := f.editor.EditFile(ctx, "notes.txt", protocol.TextEdit{Range: protocol.Range{Start: mid, End: mid}, NewText: "!"}); err != nil {
		t.Fatal(err)
	}
	expected := strings.Replace(want.String(), "line 100 é😀", "line 100 é😀!", 1)
	all := protocol.Range{End: protocol.Position{Line: 201}}
	id := f.start(ctx, "ioh.ask", map[string]any{"goal": "read my notes", "uri": string(f.editor.URI("notes.txt")), "range": all})
	f.awaitEnd(ctx, id)
	goal := f.runsByID(ctx)[id].Goal
	_, sel, ok := strings.Cut(goal, "Selection:\n")
	if !ok {
		t.Fatalf("goal has no selection: %q", goal)
	}
	if sel != expected {
		t.Errorf("the server's buffer differs from the editor's after 201 changes (len %d vs %d)", len(sel), len(expected))
	}
	// The agent read the unsaved buffer, not the empty file on disk.
	raw, err := f.editor.ExecuteCommand(ctx, "ioh.trace", map[string]string{"runId": id})
	if err != nil {
		t.Fatal(err)
	}
	var sum struct{ File string }
	_ = json.Unmarshal(raw, &sum)
	md, err := os.ReadFile(sum.File)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(md), "line 000") {
		t.Errorf("the agent's read_file did not see the open buffer:\n%s", md)
	}
}

func TestConcurrentRunsEachWithItsOwnChangeSet(t *testing.T) {
	files := map[string]string{}
	for i := 0; i < 3; i++ {
		files[fmt.Sprintf("f%d.txt", i)] = "old\n"
	}
	f := newFixture(t, files, lsptest.Config{})
	ctx := f.ctx()
	ids := make([]string, 3)
	var wg sync.WaitGroup
	for i := range 3 {
		name := fmt.Sprintf("f%d.txt", i)
		cas := f.cassette(edit(name, "old", fmt.Sprintf("new %d", i)), finish("done"))
		wg.Add(1)
		go func() {
			defer wg.Done()
			id, err := f.editor.RunID(ctx, "ioh.run", inline("edit "+name, cas, []string{"grep", "-q", "new", name}))
			if err != nil {
				t.Error(err)
				return
			}
			ids[i] = id
		}()
	}
	wg.Wait()
	for i, id := range ids {
		if id == "" {
			t.FailNow()
		}
		if end := f.awaitEnd(ctx, id); !strings.HasPrefix(end, "completed: applied") {
			t.Errorf("run %d ended %q", i, end)
		}
	}
	for i := range 3 {
		if got, want := f.read(fmt.Sprintf("f%d.txt", i)), fmt.Sprintf("new %d\n", i); got != want {
			t.Errorf("f%d.txt = %q, want %q", i, got, want)
		}
	}
	edits := f.editor.Snapshot().Edits
	if len(edits) != 3 {
		t.Fatalf("%d applyEdits, want 3 (one per run)", len(edits))
	}
	for _, e := range edits {
		if n := len(e.Edit.DocumentChanges); n != 1 {
			t.Errorf("an edit carries %d document changes; each run changed one file", n)
		}
	}
	if got := len(f.runsByID(ctx)); got != 3 {
		t.Errorf("ioh.runs lists %d runs, want 3", got)
	}
}

func TestTraceShowDocumentAndClearTrace(t *testing.T) {
	f := newFixture(t, map[string]string{"a.txt": "hello\n"}, lsptest.Config{})
	ctx := f.ctx()
	id := f.start(ctx, "ioh.run", inline("greet", f.cassette(edit("a.txt", "hello", "world"), finish("greeted")), []string{"grep", "-q", "world", "a.txt"}))
	f.awaitEnd(ctx, id)
	raw, err := f.editor.ExecuteCommand(ctx, "ioh.trace", map[string]string{"runId": id})
	if err != nil {
		t.Fatal(err)
	}
	var sum struct {
		RunID   string         `json:"runId"`
		Outcome string         `json:"outcome"`
		Steps   int            `json:"steps"`
		Types   map[string]int `json:"types"`
		File    string         `json:"file"`
	}
	if err := json.Unmarshal(raw, &sum); err != nil {
		t.Fatal(err)
	}
	if sum.RunID != id || sum.Outcome != "applied" || sum.Steps == 0 || sum.Types["tool_call"] < 2 || sum.Types["verification"] == 0 {
		t.Errorf("trace summary = %+v", sum)
	}
	st := f.editor.Snapshot()
	if len(st.Shown) != 1 || st.Shown[0].FsPath() != sum.File {
		t.Errorf("shown = %v, want %s", st.Shown, sum.File)
	}
	md, err := os.ReadFile(sum.File)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"# ioh run " + id, "outcome: **applied**", "edit_file", "## verification", "pass `check1`", "+world"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("rendered trace lacks %q", want)
		}
	}
	uri := f.editor.URI("a.txt")
	if len(st.Diagnostics[uri]) == 0 {
		t.Fatal("no trace diagnostic before clearTrace")
	}
	if _, err := f.editor.ExecuteCommand(ctx, "ioh.clearTrace", map[string]string{"runId": id}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.editor.Await(ctx, "diagnostics cleared", func(s lsptest.State) bool { return len(s.Diagnostics[uri]) == 0 }); err != nil {
		t.Fatal(err)
	}
}

func TestVerificationFailurePublishesErrorsAtLocations(t *testing.T) {
	f := newFixture(t, map[string]string{"a.go": "package a\n\nfunc A() {}\n"}, lsptest.Config{})
	ctx := f.ctx()
	check := []string{"sh", "-c", "echo 'a.go:3:6: undefined: B'; exit 1"}
	// The agent gets the failure back twice, then the run ends.
	id := f.start(ctx, "ioh.run", inline("break it", f.cassette(edit("a.go", "A()", "A() { B() }"), finish("done"), finish("done"), finish("done")), check))
	if end := f.awaitEnd(ctx, id); !strings.Contains(end, "verification_failed") {
		t.Fatalf("end %q, want verification_failed", end)
	}
	uri := f.editor.URI("a.go")
	st, err := f.editor.Await(ctx, "check diagnostic", func(s lsptest.State) bool { return len(s.Diagnostics[uri]) > 0 })
	if err != nil {
		t.Fatal(err)
	}
	d := st.Diagnostics[uri][0]
	if d.Severity != protocol.DiagnosticSeverityError || d.Range.Start.Line != 2 || d.Range.Start.Character != 5 ||
		!strings.Contains(string(d.Message.(protocol.String)), "undefined: B") {
		t.Errorf("check diagnostic = %+v", d)
	}
	// The error is a problem: it offers "Fix with agent".
	actions, err := f.editor.CodeActions(ctx, "a.go", d.Range, []protocol.Diagnostic{d})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := lsptest.FindAction(actions, "Fix with agent"); !ok {
		t.Error("no Fix with agent on a failed check's diagnostic")
	}
	if f.read("a.go") != "package a\n\nfunc A() {}\n" {
		t.Error("a failed change reached the workspace")
	}
}

// newServerFor builds a second server on the fixture's workspace and state
// (for tests that need settings from the start).
func newServerFor(f *fixture) *lspServer { return newWireServer(f.state) }

var _ = context.Background

func TestRunsAndTraceOutliveTheSession(t *testing.T) {
	f := newFixture(t, map[string]string{"a.txt": "hello\n"}, lsptest.Config{})
	ctx := f.ctx()
	id := f.start(ctx, "ioh.run", inline("greet", f.cassette(edit("a.txt", "hello", "world"), finish("greeted")), []string{"grep", "-q", "world", "a.txt"}))
	f.awaitEnd(ctx, id)
	if err := f.editor.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	// A new session on the same workspace and state reads the store.
	e := lsptest.Start(t, newWireServer(f.state), lsptest.Config{Root: f.dir})
	f.editor = e
	r, ok := f.runsByID(ctx)[id]
	if !ok || r.Outcome != "applied" || r.Goal != "greet" || r.Steps == 0 || r.Tokens == 0 {
		t.Fatalf("ioh.runs in a new session: %+v (found %v)", r, ok)
	}
	raw, err := e.ExecuteCommand(ctx, "ioh.trace", map[string]string{"runId": id})
	if err != nil {
		t.Fatal(err)
	}
	var sum struct {
		Outcome string         `json:"outcome"`
		Types   map[string]int `json:"types"`
	}
	if err := json.Unmarshal(raw, &sum); err != nil || sum.Outcome != "applied" || sum.Types["tool_call"] == 0 {
		t.Errorf("stored trace summary = %s", raw)
	}
}
