package lsp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/ioh-lsp/ioh-lsp/internal/lsp/lsptest"
	"go.lsp.dev/protocol"
)

// awaitHeld waits until the proposal of run id holds a diagnostic on rel.
func (f *fixture) awaitHeld(ctx context.Context, id, rel string) {
	f.t.Helper()
	u := f.editor.URI(rel)
	if _, err := f.editor.Await(ctx, "held proposal of "+id+" on "+rel, func(s lsptest.State) bool {
		for _, d := range s.Diagnostics[u] {
			if m, ok := d.Message.(protocol.String); ok && strings.Contains(string(m), "pending review") {
				return true
			}
		}
		return false
	}); err != nil {
		f.t.Fatal(err)
	}
}

// awaitEnds waits for the n-th end of run id (its progress end, or the
// closing message for clients without progress: a run that continues
// ends again) and returns its message.
func (f *fixture) awaitEnds(ctx context.Context, id string, n int) string {
	f.t.Helper()
	var msg string
	if _, err := f.editor.Await(ctx, fmt.Sprintf("end %d of run %s", n, id), func(s lsptest.State) bool {
		var ends []string
		for _, p := range s.Progress["ioh/"+id] {
			if p.Kind == "end" {
				ends = append(ends, p.Message)
			}
		}
		for _, m := range s.Messages { // a client without work-done progress
			if strings.Contains(m.Message, "(run "+id+",") {
				ends = append(ends, m.Message)
			}
		}
		if len(ends) >= n {
			msg = ends[n-1]
			return true
		}
		return false
	}); err != nil {
		f.t.Fatal(err)
	}
	return msg
}

// traceTypes is ioh.trace's count of events per type for run id.
func (f *fixture) traceTypes(ctx context.Context, id string) map[string]int {
	f.t.Helper()
	raw, err := f.editor.ExecuteCommand(ctx, "ioh.trace", map[string]string{"runId": id})
	if err != nil {
		f.t.Fatal(err)
	}
	var sum struct{ Types map[string]int }
	if err := json.Unmarshal(raw, &sum); err != nil {
		f.t.Fatal(err)
	}
	return sum.Types
}

// A follow-up ask on a proposal held for review continues its run: the
// replayed model goes on from the turns it already took (a fresh run
// would start the cassette again), its edit adds to the pending change,
// the check runs on the whole change and one Apply writes both files. A
// follow-up on the applied run starts a run linked to it.
func TestAskFollowUpContinuesTheConversation(t *testing.T) {
	caps := lsptest.PlainCapabilities()
	f := newFixture(t, map[string]string{"a.txt": "hello\n", "b.txt": "one\n", "c.txt": "none\n"}, lsptest.Config{Capabilities: &caps,
		Hooks: lsptest.Hooks{ShowMessageRequest: func(context.Context, *protocol.ShowMessageRequestParams) (*protocol.MessageActionItem, error) {
			return nil, nil // dismissed: the proposal stays held
		}}})
	ctx := f.ctx()
	cas := f.cassette(edit("a.txt", "hello", "world"), finish("greeted"),
		edit("b.txt", "one", "two"), finish("and b.txt"),
		edit("c.txt", "none", "three"), finish("and c.txt"))
	// The check needs a.txt's edit, which only the change set holds.
	id := f.start(ctx, "ioh.run", inline("greet", cas, []string{"grep", "-q", "world", "a.txt"}))
	f.awaitHeld(ctx, id, "a.txt")

	got := f.start(ctx, "ioh.ask", map[string]any{"goal": "also write two into b.txt", "runId": id})
	if got != id {
		t.Fatalf("the follow-up on a held proposal went to %s, want %s", got, id)
	}
	f.awaitHeld(ctx, id, "b.txt")
	if _, err := f.editor.ExecuteCommand(ctx, "ioh.approve", map[string]string{"runId": id}); err != nil {
		t.Fatal(err)
	}
	if end := f.awaitEnds(ctx, id, 2); !strings.Contains(end, "applied") {
		t.Fatalf("the continued run ended %q, want applied", end)
	}
	if a, b := f.read("a.txt"), f.read("b.txt"); a != "world\n" || b != "two\n" {
		t.Errorf("a.txt %q, b.txt %q: want both turns' edits applied", a, b)
	}
	if n := f.traceTypes(ctx, id)["user_turn"]; n != 1 {
		t.Errorf("the trace of %s holds %d user_turn events, want 1", id, n)
	}

	linked := f.start(ctx, "ioh.ask", map[string]any{"goal": "and three into c.txt", "runId": id,
		"uri": string(f.editor.URI("a.txt"))})
	if linked == id {
		t.Fatalf("a follow-up on an applied run went to the same run")
	}
	f.awaitHeld(ctx, linked, "c.txt")
	if _, err := f.editor.ExecuteCommand(ctx, "ioh.approve", map[string]string{"runId": linked}); err != nil {
		t.Fatal(err)
	}
	f.awaitEnd(ctx, linked)
	if c := f.read("c.txt"); c != "three\n" {
		t.Errorf("c.txt = %q", c)
	}
	runs := f.runsByID(ctx)
	if r := runs[linked]; !strings.HasPrefix(r.Goal, "and three into c.txt\n\nFile: a.txt") {
		t.Errorf("the linked run's goal = %q", r.Goal)
	}
	if r := runs[id]; r.Outcome != "applied" {
		t.Errorf("the earlier run is %q now, want applied", r.Outcome)
	}
}

// A follow-up names a run the store does not have: invalid params, with
// the run id; nothing starts.
func TestAskFollowUpUnknownRun(t *testing.T) {
	f := newFixture(t, map[string]string{"a.txt": "hello\n"}, lsptest.Config{})
	ctx := f.ctx()
	_, err := f.editor.ExecuteCommand(ctx, "ioh.ask", map[string]any{"goal": "more", "runId": "r-0123456789abcdef"})
	if err == nil || !strings.Contains(err.Error(), "r-0123456789abcdef") {
		t.Fatalf("follow-up on an unknown run: %v, want an error naming it", err)
	}
	if runs := f.runsByID(ctx); len(runs) != 0 {
		t.Errorf("runs after a refused follow-up: %v", runs)
	}
}
