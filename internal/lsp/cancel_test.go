package lsp_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"

	"github.com/ioh-lsp/ioh-lsp/internal/lsp/lsptest"
)

func runTrue() []call { return []call{{Name: "run", Args: map[string]any{"argv": []string{"true"}}}} }

// gate is a showMessageRequest hook that records questions and answers
// them only when released (or with a fixed answer).
type gate struct {
	asked   chan *protocol.ShowMessageRequestParams
	release chan string
}

func newGate(t *testing.T) *gate {
	g := &gate{asked: make(chan *protocol.ShowMessageRequestParams, 16), release: make(chan string, 16)}
	t.Cleanup(func() { close(g.release) })
	return g
}

func (g *gate) hook(ctx context.Context, p *protocol.ShowMessageRequestParams) (*protocol.MessageActionItem, error) {
	g.asked <- p
	select {
	case title, ok := <-g.release:
		if !ok || title == "" {
			return nil, nil
		}
		return &protocol.MessageActionItem{Title: title}, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func TestAskTierActAsksAllowOnceAllowRunDeny(t *testing.T) {
	g := newGate(t)
	f := newFixture(t, map[string]string{"a.txt": "x\n"}, lsptest.Config{Hooks: lsptest.Hooks{ShowMessageRequest: g.hook}})
	ctx := f.ctx()
	id := f.start(ctx, "ioh.run", inline("run true", f.cassette(runTrue(), finish("nothing to change"))))
	q := <-g.asked
	var titles []string
	for _, a := range q.Actions {
		titles = append(titles, a.Title)
	}
	if diff := cmp.Diff(titles, []string{"Allow once", "Allow for this run", "Deny"}); diff != "" {
		t.Errorf("act question actions (-got +want):\n%s", diff)
	}
	if !strings.Contains(q.Message, id) || !strings.Contains(q.Message, "exec") || !strings.Contains(q.Message, "true") {
		t.Errorf("act question = %q", q.Message)
	}
	g.release <- "Deny"
	if end := f.awaitEnd(ctx, id); !strings.Contains(end, "denied") {
		t.Errorf("end %q, want denied", end)
	}
}

func TestProgressCancelCancelsTheRun(t *testing.T) {
	g := newGate(t)
	f := newFixture(t, map[string]string{"a.txt": "x\n"}, lsptest.Config{Hooks: lsptest.Hooks{ShowMessageRequest: g.hook}})
	ctx := f.ctx()
	id := f.start(ctx, "ioh.run", inline("run true", f.cassette(runTrue(), finish("done"))))
	<-g.asked // the run waits on the user
	token := "ioh/" + id
	if _, err := f.editor.Await(ctx, "progress begin", func(s lsptest.State) bool { return len(s.Progress[token]) > 0 }); err != nil {
		t.Fatal(err)
	}
	if err := f.editor.CancelProgress(ctx, token); err != nil {
		t.Fatal(err)
	}
	if end := f.awaitEnd(ctx, id); !strings.HasPrefix(end, "cancelled: cancelled") {
		t.Errorf("end %q, want cancelled", end)
	}
	if r := f.runsByID(ctx)[id]; r.Outcome != "cancelled" {
		t.Errorf("outcome %q", r.Outcome)
	}
}

func TestCancelCommandCancelsTheRun(t *testing.T) {
	g := newGate(t)
	f := newFixture(t, map[string]string{"a.txt": "hello\n"}, lsptest.Config{Hooks: lsptest.Hooks{ShowMessageRequest: g.hook}})
	ctx := f.ctx()
	cas := f.cassette(runTrue(), edit("a.txt", "hello", "world"), finish("done"))
	id := f.start(ctx, "ioh.run", inline("run then edit", cas, []string{"grep", "-q", "world", "a.txt"}))
	<-g.asked
	raw, err := f.editor.ExecuteCommand(ctx, "ioh.cancel", map[string]string{"runId": id})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(raw), `"cancelled":true`) {
		t.Errorf("ioh.cancel answered %s", raw)
	}
	if end := f.awaitEnd(ctx, id); !strings.HasPrefix(end, "cancelled") {
		t.Fatalf("end %q, want cancelled", end)
	}
	if got := f.read("a.txt"); got != "hello\n" {
		t.Errorf("a cancelled run changed a.txt: %q", got)
	}
}

func TestDeferredRunResumesAndIsApprovedThroughTheHarness(t *testing.T) {
	// A client that cannot apply edits: the verified change is deferred.
	caps := protocol.ClientCapabilities{}
	f := newFixture(t, map[string]string{"a.txt": "hello\n"}, lsptest.Config{Capabilities: &caps})
	ctx := f.ctx()
	task := "version: 1\ngoal: greet\nverify:\n  - name: says-world\n    run: [grep, -q, world, a.txt]\n"
	writeFile(t, filepath.Join(f.dir, ".ioh", "tasks", "greet.yaml"), task)
	cas := f.cassette(edit("a.txt", "hello", "world"), finish("done"))
	f.editor = lsptest.Start(t, newServerFor(f), lsptest.Config{Root: f.dir, Capabilities: &caps, Settings: map[string]any{
		"model": map[string]any{"provider": "replay", "name": "test", "cassette": cas},
	}})
	id := f.start(ctx, "ioh.run", map[string]string{"contract": ".ioh/tasks/greet.yaml"})
	if end := f.awaitEnd(ctx, id); !strings.Contains(end, "awaiting_approval") {
		t.Fatalf("end %q, want awaiting_approval", end)
	}
	lenses, err := f.editor.CodeLenses(ctx, ".ioh/tasks/greet.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var cmds []string
	for _, l := range lenses {
		cmds = append(cmds, l.Command.Command)
	}
	if diff := cmp.Diff(cmds, []string{"ioh.run", "ioh.resume"}); diff != "" {
		t.Errorf("task lenses (-got +want):\n%s", diff)
	}
	// Resume re-offers the change; this client still cannot take it.
	if _, err := f.editor.ExecuteCommand(ctx, "ioh.resume", map[string]string{"runId": id}); err != nil {
		t.Fatal(err)
	}
	_, err = f.editor.Await(ctx, "second deferral", func(s lsptest.State) bool {
		n := 0
		for _, m := range s.Messages {
			if strings.Contains(m.Message, "(run "+id+",") && strings.Contains(m.Message, "awaiting_approval") {
				n++
			}
		}
		return n == 2
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := f.read("a.txt"); got != "hello\n" {
		t.Fatalf("a deferred change reached the disk: %q", got)
	}
	// ioh.approve applies it through the harness (conflict-checked).
	raw, err := f.editor.ExecuteCommand(ctx, "ioh.approve", map[string]string{"runId": id})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(raw), `"applied"`) {
		t.Errorf("approve answered %s", raw)
	}
	if got := f.read("a.txt"); got != "world\n" {
		t.Errorf("a.txt = %q", got)
	}
}

// A denial of a built-in protected path is a policy-denied Warning with
// no quick fix: no grant lifts the built-in layer, so "Allow once" would
// always fail, and the message says the path cannot be allowed from the
// editor. This test used to expect the quick fix and a re-run ending
// denied; the quick fix is now offered only where it can succeed
// (TestAllowOnceLiftsATaskScopeDenial). Sending ioh.allowOnce for the path
// anyway still re-runs the task and ends denied.
func TestProtectedPathDenialOffersNoAllowOnce(t *testing.T) {
	f := newFixture(t, map[string]string{"a.txt": "x\n"}, lsptest.Config{})
	ctx := f.ctx()
	write := []call{{Name: "write_file", Args: map[string]any{"path": ".env", "content": "TOKEN=1\n"}}}
	id := f.start(ctx, "ioh.run", inline("write env", f.cassette(write, finish("gave up"))))
	f.awaitEnd(ctx, id)
	uri := f.editor.URI(".env")
	st, err := f.editor.Await(ctx, "policy diagnostic", func(s lsptest.State) bool { return len(s.Diagnostics[uri]) > 0 })
	if err != nil {
		t.Fatal(err)
	}
	d := st.Diagnostics[uri][0]
	code, _ := d.Code.(protocol.String)
	msg := string(d.Message.(protocol.String))
	if d.Severity != protocol.DiagnosticSeverityWarning || code != "policy-denied" || !strings.Contains(msg, "write") ||
		!strings.Contains(msg, "protected") || !strings.Contains(msg, "cannot be allowed from the editor") {
		t.Errorf("policy diagnostic = %+v", d)
	}
	actions, err := f.editor.CodeActions(ctx, ".env", d.Range, []protocol.Diagnostic{d})
	if err != nil {
		t.Fatal(err)
	}
	if a, ok := lsptest.FindAction(actions, "Allow once"); ok {
		t.Errorf("a protected path's denial offered %q", a.Title)
	}
	if _, ok := lsptest.FindAction(actions, "Fix with agent"); ok {
		t.Error("a policy denial offered Fix with agent")
	}
	raw, err := f.editor.ExecuteCommand(ctx, "ioh.allowOnce", map[string]string{"runId": id, "act": "write", "target": ".env"})
	if err != nil {
		t.Fatal(err)
	}
	var ref struct{ RunID string }
	if err := json.Unmarshal(raw, &ref); err != nil || ref.RunID == "" || ref.RunID == id {
		t.Fatalf("ioh.allowOnce answered %s", raw)
	}
	if end := f.awaitEnd(ctx, ref.RunID); !strings.Contains(end, "denied") {
		t.Errorf("re-run ended %q, want denied by the built-in rule", end)
	}
	if _, err := os.Stat(filepath.Join(f.dir, ".env")); !os.IsNotExist(err) {
		t.Errorf(".env exists after the re-run (%v)", err)
	}
}

func TestCancelRequestAnswersRequestCancelled(t *testing.T) {
	dir := t.TempDir()
	state := t.TempDir()
	c, _ := startRaw(t, newWireServer(state))
	writeFile(t, filepath.Join(dir, "a.txt"), "hello\n")
	f := &fixture{t: t, dir: dir, state: state}
	cas := f.cassette(edit("a.txt", "hello", "world"), finish("done"))
	yes := true
	c.call(1, "initialize", map[string]any{
		"processId": nil, "rootUri": "file://" + dir,
		"capabilities": map[string]any{"workspace": map[string]any{"applyEdit": yes, "workspaceEdit": map[string]any{"documentChanges": yes}}},
	})
	c.response(1)
	c.notify("initialized", map[string]any{})
	c.call(2, "workspace/executeCommand", map[string]any{"command": "ioh.run", "arguments": []any{inline("greet", cas, []string{"grep", "-q", "world", "a.txt"})}})
	resp, _ := c.response(2)
	var ref struct{ RunID string }
	if err := json.Unmarshal(resp.Result(), &ref); err != nil || ref.RunID == "" {
		t.Fatalf("ioh.run answered %s %v", resp.Result(), resp.Err())
	}
	c.waitFor("window/showMessageRequest") // the held proposal asks; nobody answers
	c.call(3, "workspace/executeCommand", map[string]any{"command": "ioh.approve", "arguments": []any{map[string]string{"runId": ref.RunID}}})
	c.waitFor("workspace/applyEdit") // the approve request now waits on the editor
	c.notify("$/cancelRequest", map[string]any{"id": 3})
	resp, _ = c.response(3)
	var we *jsonrpc2.Error
	if !errorsAs(resp.Err(), &we) || we.Code != -32800 {
		t.Fatalf("cancelled request answered %v, want -32800", resp.Err())
	}
}
