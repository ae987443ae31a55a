package lsp_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"go.lsp.dev/protocol"

	"github.com/ioh-lsp/ioh-lsp/internal/agent/event"
	"github.com/ioh-lsp/ioh-lsp/internal/lsp/lsptest"
)

// "Allow once" re-runs the task on the folder's engine (no second harness,
// no second trace store opened) with the act allowed exactly once: the
// re-run's first `run true` is not asked about, its second is. Before, each
// click built a new engine whose settings allowed the act for the whole
// re-run.
func TestAllowOnceRerunsOnTheSameEngine(t *testing.T) {
	state := t.TempDir()
	cf := newCountingFactory(state)
	g := newGate(t)
	f := newFactoryFixture(t, map[string]string{"a.txt": "x\n"}, lsptest.Config{Hooks: lsptest.Hooks{ShowMessageRequest: g.hook}}, cf.build)
	ctx := f.ctx()

	id := f.start(ctx, "ioh.run", inline("run true twice", f.cassette(runTrue(), runTrue(), finish("ran"))))
	for range 2 {
		if q := <-g.asked; !strings.Contains(q.Message, id) {
			t.Fatalf("question %q is not about run %s", q.Message, id)
		}
		g.release <- "Deny"
	}
	f.awaitEnd(ctx, id)

	raw, err := f.editor.ExecuteCommand(ctx, "ioh.allowOnce", map[string]string{"runId": id, "act": "exec", "target": "true"})
	if err != nil {
		t.Fatal(err)
	}
	var ref struct{ RunID string }
	if err := json.Unmarshal(raw, &ref); err != nil || ref.RunID == "" || ref.RunID == id {
		t.Fatalf("ioh.allowOnce answered %s", raw)
	}
	ended := make(chan struct{})
	go func() {
		defer close(ended)
		f.editor.Await(ctx, "end of the re-run", func(s lsptest.State) bool {
			_, ok := lsptest.ProgressEnded(s, "ioh/"+ref.RunID)
			return ok
		})
	}()
	var q *protocol.ShowMessageRequestParams
	select {
	case q = <-g.asked: // the re-run's second run true; the first ran unasked
	case <-ended:
		t.Fatalf("the re-run ended without asking about its second run true (%d engines built): the act was allowed more than once", cf.count())
	}
	if !strings.Contains(q.Message, ref.RunID) {
		t.Fatalf("question %q is not about the re-run %s", q.Message, ref.RunID)
	}
	g.release <- "Deny"
	f.awaitEnd(ctx, ref.RunID)
	select {
	case q := <-g.asked:
		t.Errorf("the re-run asked again: %q", q.Message)
	default:
	}
	if n := cf.count(); n != 1 {
		t.Errorf("%d engines built, want 1: allow once opened another harness and trace store", n)
	}
	select {
	case n := <-cf.closed:
		t.Errorf("engine %d closed during the session", n)
	default:
	}
}

// scopedTo is an inline contract replaying cassette whose writes are
// limited to scope, with one sandboxed check.
func scopedTo(goal, cassette string, scope []string, check []string) map[string]any {
	c := inline(goal, cassette, check)
	c["inline"].(map[string]any)["scope"] = map[string]any{"write": scope}
	return c
}

func writeCall(path, content string) call {
	return call{Name: "write_file", Args: map[string]any{"path": path, "content": content}}
}

// policyEvents lists a run's policy verdicts on target, as layer/effect,
// from the folder's trace store.
func (f *fixture) policyEvents(ctx context.Context, id, target string) []string {
	f.t.Helper()
	e := f.harness(ctx, nil)
	defer e.Close()
	evs, err := e.Store.Events(ctx, id)
	if err != nil {
		f.t.Fatal(err)
	}
	var out []string
	for _, ev := range evs {
		if p, ok := ev.Payload.(*event.Policy); ok && p.Target == target {
			out = append(out, p.Layer+"/"+p.Effect)
		}
	}
	return out
}

// policyDiag waits for the run's policy-denied diagnostic on rel.
func (f *fixture) policyDiag(ctx context.Context, id, rel string) protocol.Diagnostic {
	f.t.Helper()
	uri := f.editor.URI(rel)
	var d protocol.Diagnostic
	_, err := f.editor.Await(ctx, "policy-denied diagnostic of run "+id+" on "+rel, func(s lsptest.State) bool {
		for _, x := range s.Diagnostics[uri] {
			if m, _ := x.Message.(protocol.String); strings.Contains(string(m), "run "+id+",") && x.Code == protocol.String("policy-denied") {
				d = x
				return true
			}
		}
		return false
	})
	if err != nil {
		f.t.Fatal(err)
	}
	return d
}

// "Allow once" on a write the task's scope denies re-runs the task with
// that write allowed once: the re-run's write succeeds and its change is
// applied, the policy event naming the grant; the same write a second
// time in that run is denied again (by the task) and marked again. Before,
// a grant was an allow below every deny, so the quick fix re-ran the task
// only for it to be denied the same way.
func TestAllowOnceLiftsATaskScopeDenial(t *testing.T) {
	f := newFixture(t, map[string]string{"src/a.go": "package a\n", "notes/a.md": "old\n"}, lsptest.Config{})
	ctx := f.ctx()
	cas := f.cassette([]call{writeCall("notes/a.md", "new\n")}, []call{writeCall("notes/a.md", "again\n")}, finish("documented"))
	id := f.start(ctx, "ioh.run", scopedTo("document it", cas, []string{"src/**"}, []string{"grep", "-q", "new", "notes/a.md"}))
	if end := f.awaitEnd(ctx, id); !strings.Contains(end, "denied") {
		t.Fatalf("run ended %q, want denied by the task's scope", end)
	}
	d := f.policyDiag(ctx, id, "notes/a.md")
	if m := string(d.Message.(protocol.String)); !strings.Contains(m, "layer task") || strings.Contains(m, "cannot be allowed") {
		t.Errorf("policy diagnostic says %q, want the task layer and no refusal", m)
	}
	actions, err := f.editor.CodeActions(ctx, "notes/a.md", d.Range, []protocol.Diagnostic{d})
	if err != nil {
		t.Fatal(err)
	}
	allow, ok := lsptest.FindAction(actions, "Allow once")
	if !ok {
		t.Fatalf("no Allow once quick fix in %v", actions)
	}
	if allow.Kind == nil || *allow.Kind != protocol.CodeActionKindQuickFix || allow.Title != "Allow once: write notes/a.md" {
		t.Errorf("Allow once action = %q (kind %v)", allow.Title, allow.Kind)
	}
	raw, err := f.editor.ApplyCodeAction(ctx, allow)
	if err != nil {
		t.Fatal(err)
	}
	var ref struct{ RunID string }
	if err := json.Unmarshal(raw, &ref); err != nil || ref.RunID == "" || ref.RunID == id {
		t.Fatalf("Allow once answered %s", raw)
	}
	if end := f.awaitEnd(ctx, ref.RunID); !strings.HasPrefix(end, "completed: applied") {
		t.Fatalf("re-run ended %q, want completed: applied", end)
	}
	if got := f.read("notes/a.md"); got != "new\n" {
		t.Errorf("notes/a.md = %q, want the granted write", got)
	}
	if got := f.policyEvents(ctx, ref.RunID, "notes/a.md"); !slices.Equal(got, []string{"grant/allow", "task/deny"}) {
		t.Errorf("the re-run's verdicts on notes/a.md = %v, want allowed by the grant, then denied by the task", got)
	}
	if got := f.policyEvents(ctx, id, "notes/a.md"); !slices.Equal(got, []string{"task/deny", "task/deny"}) {
		t.Errorf("control: the first run's verdicts on notes/a.md = %v, want denied twice by the task", got)
	}
	// The trace the editor opens says who allowed it.
	raw, err = f.editor.ExecuteCommand(ctx, "ioh.trace", map[string]string{"runId": ref.RunID})
	if err != nil {
		t.Fatal(err)
	}
	var sum struct{ File string }
	if err := json.Unmarshal(raw, &sum); err != nil || sum.File == "" {
		t.Fatalf("ioh.trace answered %s", raw)
	}
	if md, err := os.ReadFile(sum.File); err != nil || !strings.Contains(string(md), `layer="grant"`) {
		t.Errorf("the re-run's rendered trace does not name the grant (%v):\n%s", err, md)
	}
	// The second write of the re-run is marked, at its step, with the
	// quick fix again.
	d2 := f.policyDiag(ctx, ref.RunID, "notes/a.md")
	if m := string(d2.Message.(protocol.String)); !strings.Contains(m, "step 2") {
		t.Errorf("the re-run's denial says %q, want step 2", m)
	}
}

// A grant covers the act's final form only. A grant of notes/a.md does not
// allow notes/a.md/../../lib/a.md (lib/a.md), and one of notes/link.md, a
// link to lib/b.md outside the scope, does not open lib/b.md: the re-run
// writes notes/a.md (the control in the same run) and nothing else.
func TestAllowOnceCoversOnlyTheFinalForm(t *testing.T) {
	f := newFixture(t, map[string]string{"src/a.go": "package a\n", "notes/a.md": "old\n", "lib/b.md": "keep\n"}, lsptest.Config{})
	if err := os.Symlink("../lib/b.md", filepath.Join(f.dir, "notes", "link.md")); err != nil {
		t.Fatal(err)
	}
	ctx := f.ctx()
	cas := f.cassette(
		[]call{writeCall("notes/a.md/../../lib/a.md", "x\n")},
		[]call{writeCall("notes/link.md", "y\n")},
		[]call{writeCall("notes/a.md", "new\n")},
		finish("documented"))
	id := f.start(ctx, "ioh.run", scopedTo("document it", cas, []string{"src/**"}, []string{"grep", "-q", "new", "notes/a.md"}))
	f.awaitEnd(ctx, id)
	for _, rel := range []string{"lib/a.md", "notes/link.md", "notes/a.md"} {
		f.policyDiag(ctx, id, rel)
	}

	allow := func(target string) (string, string) {
		t.Helper()
		raw, err := f.editor.ExecuteCommand(ctx, "ioh.allowOnce", map[string]string{"runId": id, "act": "write", "target": target})
		if err != nil {
			t.Fatal(err)
		}
		var ref struct{ RunID string }
		if err := json.Unmarshal(raw, &ref); err != nil || ref.RunID == "" {
			t.Fatalf("ioh.allowOnce answered %s", raw)
		}
		return ref.RunID, f.awaitEnd(ctx, ref.RunID)
	}
	linkRun, end := allow("notes/link.md")
	if !strings.Contains(end, "denied") {
		t.Errorf("the re-run granted notes/link.md ended %q, want denied", end)
	}
	if got := f.policyEvents(ctx, linkRun, "notes/link.md"); !slices.Equal(got, []string{"task/deny"}) {
		t.Errorf("notes/link.md, a link to lib/b.md, with its grant was judged %v, want denied by the task", got)
	}
	if got := f.read("lib/b.md"); got != "keep\n" {
		t.Errorf("lib/b.md = %q, want it untouched", got)
	}

	aRun, end := allow("notes/a.md")
	if !strings.HasPrefix(end, "completed: applied") {
		t.Fatalf("the re-run granted notes/a.md ended %q, want completed: applied", end)
	}
	if got := f.policyEvents(ctx, aRun, "lib/a.md"); !slices.Equal(got, []string{"task/deny"}) {
		t.Errorf("notes/a.md/../../lib/a.md with a grant of notes/a.md was judged %v, want denied by the task", got)
	}
	if got := f.policyEvents(ctx, aRun, "notes/a.md"); !slices.Equal(got, []string{"grant/allow"}) {
		t.Errorf("notes/a.md with its grant was judged %v, want allowed by the grant", got)
	}
	if got := f.read("notes/a.md"); got != "new\n" {
		t.Errorf("notes/a.md = %q, want the granted write", got)
	}
	if _, err := os.Stat(filepath.Join(f.dir, "lib", "a.md")); !os.IsNotExist(err) {
		t.Errorf("lib/a.md exists (%v), want it never written", err)
	}
	if got := f.read("lib/b.md"); got != "keep\n" {
		t.Errorf("lib/b.md = %q, want it untouched", got)
	}
}
