package lsp_test

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/ioh-lsp/ioh-lsp/internal/agent"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/approve"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/contract"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/event"
	"github.com/ioh-lsp/ioh-lsp/internal/lsp/lsptest"
	"github.com/ioh-lsp/ioh-lsp/internal/wire"
)

// deferredRun runs an inline contract in f's workspace and trace outside
// the server, with an approver that defers (as `ioh-lsp run --approve
// ask` without a terminal), and returns the run stopped at its Ask-tier
// act.
func deferredRun(t *testing.T, f *fixture, ctx context.Context, in map[string]any) string {
	t.Helper()
	e := f.harness(ctx, approve.Deferral{})
	defer e.Close()
	raw, _ := json.Marshal(in["inline"])
	c, err := contract.Parse(raw, "inline")
	if err != nil {
		t.Fatal(err)
	}
	r, err := e.Harness.Start(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	res := r.Wait()
	if res.Outcome != agent.OutcomeAwaitingApproval || res.Pending {
		t.Fatalf("deferred run: %s (pending change %v, %v), want awaiting_approval on an act", res.Outcome, res.Pending, res.Err)
	}
	return res.RunID
}

// harness is a harness on f's workspace and trace, outside the server.
func (f *fixture) harness(ctx context.Context, ap agent.Approver) *wire.Engine {
	f.t.Helper()
	getenv := func(k string) string {
		if k == "IOH_STATE_DIR" {
			return f.state
		}
		return os.Getenv(k)
	}
	e, err := wire.NewHarness(ctx, wire.Options{Root: f.dir, Getenv: getenv, Environ: func() []string { return nil }, Approver: ap})
	if err != nil {
		f.t.Fatal(err)
	}
	return e
}

// approvals are the run's approval events of acts, from its trace.
func (f *fixture) approvals(ctx context.Context, id string) []event.Event {
	f.t.Helper()
	e := f.harness(ctx, nil)
	defer e.Close()
	evs, err := e.Store.Events(ctx, id)
	if err != nil {
		f.t.Fatal(err)
	}
	var out []event.Event
	for _, ev := range evs {
		if a, ok := ev.Payload.(*event.Approval); ok && !a.Change {
			out = append(out, ev)
		}
	}
	return out
}

// TestEditorAnswersDeferredAct: a run stopped at an Ask-tier act
// (deferred outside the editor) is answered with ioh.approve {forRun} or
// ioh.reject {reason}: the answer is recorded and the run continues with
// it, without asking the editor again (issue 13 item 2). The control:
// ioh.resume with no answer recorded asks the editor about the act.
func TestEditorAnswersDeferredAct(t *testing.T) {
	tests := []struct {
		name   string
		cmd    string
		arg    func(id string) map[string]any
		answer string // in the trace; "" for the control
		reason string
	}{
		{name: "approve for the run", cmd: "ioh.approve", arg: func(id string) map[string]any { return map[string]any{"runId": id, "forRun": true} }, answer: "allow_run"},
		{name: "approve once", cmd: "ioh.approve", arg: func(id string) map[string]any { return map[string]any{"runId": id} }, answer: "allow_once"},
		{name: "reject with a reason", cmd: "ioh.reject", arg: func(id string) map[string]any { return map[string]any{"runId": id, "reason": "not that command"} }, answer: "deny", reason: "not that command"},
		{name: "control resume asks", cmd: "ioh.resume", arg: func(id string) map[string]any { return map[string]any{"runId": id} }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := newGate(t)
			f := newFixture(t, map[string]string{"a.txt": "x\n"}, lsptest.Config{Hooks: lsptest.Hooks{ShowMessageRequest: g.hook}})
			ctx := f.ctx()
			in := inline("run true, then edit", f.cassette(runTrue(), edit("a.txt", "x", "y"), finish("edited")))
			id := deferredRun(t, f, ctx, in)
			if _, err := f.editor.ExecuteCommand(ctx, tt.cmd, tt.arg(id)); err != nil {
				t.Fatalf("%s: %v", tt.cmd, err)
			}
			if tt.answer == "" {
				// Without an answer the editor is asked about the act.
				q := <-g.asked
				if !strings.Contains(q.Message, "exec") || !strings.Contains(q.Message, id) {
					t.Fatalf("question = %q, want the exec act of %s", q.Message, id)
				}
				g.release <- "Allow once"
			}
			end := f.awaitEnd(ctx, id)
			if got := f.runsByID(ctx)[id].Outcome; got != "applied" {
				t.Fatalf("outcome %q (%s), want applied", got, end)
			}
			if f.read("a.txt") != "y\n" {
				t.Errorf("a.txt = %q", f.read("a.txt"))
			}
			if tt.answer != "" {
				select {
				case q := <-g.asked:
					t.Errorf("the editor was asked although the act was answered: %q", q.Message)
				default:
				}
			}
			evs := f.approvals(ctx, id)
			var answers []string
			for _, ev := range evs {
				p := ev.Payload.(*event.Approval)
				a := p.Answer
				answers = append(answers, a)
				if tt.reason != "" && a == "deny" && p.Reason != tt.reason {
					t.Errorf("deny reason %v, want %q", p.Reason, tt.reason)
				}
			}
			want := "defer," + tt.answer + "," + tt.answer // deferred, recorded, taken by the resumed turn
			if tt.answer == "" {
				want = "defer,allow_once"
			}
			if got := strings.Join(answers, ","); got != want {
				t.Errorf("act approvals in the trace = %s, want %s", got, want)
			}
		})
	}
}

// TestEditorCancelledRunResumes: a run cancelled with ioh.cancel after
// some committed steps is resumed with ioh.resume and ends as an
// uninterrupted run does: applied, the same file content, the same
// steps (issue 13 item 4).
func TestEditorCancelledRunResumes(t *testing.T) {
	files := map[string]string{"a.txt": "one\n", "b.txt": "two\n"}
	turns := func(f *fixture) map[string]any {
		return inline("edit two files", f.cassette(edit("a.txt", "one", "ONE"), edit("b.txt", "two", "TWO"), edit("a.txt", "ONE", "ONE!"), finish("edited")))
	}
	ref := newFixture(t, files, lsptest.Config{})
	ctx := ref.ctx()
	refID := ref.start(ctx, "ioh.run", turns(ref))
	ref.awaitEnd(ctx, refID)
	want := ref.runsByID(ctx)[refID]
	if want.Outcome != "applied" {
		t.Fatalf("reference run: %+v", want)
	}

	t.Setenv("IOH_TEST_MODEL_DELAY", "1s")
	f := newFixture(t, files, lsptest.Config{})
	id := f.start(ctx, "ioh.run", turns(f))
	token := "ioh/" + id
	if _, err := f.editor.Await(ctx, "step 2 of "+id, func(s lsptest.State) bool {
		for _, p := range s.Progress[token] {
			if strings.Contains(p.Message, "step 2") {
				return true
			}
		}
		return false
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.editor.ExecuteCommand(ctx, "ioh.cancel", map[string]any{"runId": id}); err != nil {
		t.Fatal(err)
	}
	f.awaitEnd(ctx, id)
	mid := f.runsByID(ctx)[id]
	if mid.Outcome != "cancelled" || mid.Steps >= want.Steps {
		t.Fatalf("after ioh.cancel: %+v, want cancelled before step %d", mid, want.Steps)
	}
	if got := f.read("a.txt"); got != "one\n" {
		t.Fatalf("a cancelled run wrote a.txt: %q", got)
	}
	t.Setenv("IOH_TEST_MODEL_DELAY", "")
	if _, err := f.editor.ExecuteCommand(ctx, "ioh.resume", map[string]any{"runId": id}); err != nil {
		t.Fatalf("ioh.resume: %v", err)
	}
	if _, err := f.editor.Await(ctx, "second end of "+id, func(s lsptest.State) bool {
		n := 0
		for _, p := range s.Progress[token] {
			if p.Kind == "end" {
				n++
			}
		}
		return n >= 2
	}); err != nil {
		t.Fatal(err)
	}
	got := f.runsByID(ctx)[id]
	if got.Outcome != want.Outcome || got.Steps != want.Steps {
		t.Errorf("resumed: %s after %d steps, uninterrupted: %s after %d", got.Outcome, got.Steps, want.Outcome, want.Steps)
	}
	for _, name := range []string{"a.txt", "b.txt"} {
		if a, b := f.read(name), ref.read(name); a != b {
			t.Errorf("%s = %q, uninterrupted run wrote %q", name, a, b)
		}
	}
}
