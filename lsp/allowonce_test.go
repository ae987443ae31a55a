package lsp_test

import (
	"encoding/json"
	"strings"
	"testing"

	"go.lsp.dev/protocol"

	"github.com/ioh-lsp/ioh-lsp/lsp/lsptest"
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
