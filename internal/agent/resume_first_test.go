package agent

import (
	"context"
	"testing"

	"github.com/ioh-lsp/ioh-lsp/internal/agent/model"
)

// A resumed run sends its first message (the orientation) again, before
// the restored steps: the stored steps hold only what came after it.
func TestResumeSendsTheFirstMessage(t *testing.T) {
	f := newFixture(t, map[string]string{"a.txt": "one\n", "go.mod": "module m\n"}, map[string][]turn{"": {
		say(100, "read_file", args{"path": "a.txt"}),
		say(200, "finish", args{"summary": "s"}),
	}})
	ctx, cancel := context.WithCancel(context.Background())
	orig := f.prov.turns[""][1]
	f.prov.turns[""][1] = turn{fn: func(req *model.Request) (*model.Response, error) {
		cancel()
		return nil, context.Canceled
	}}
	r, err := f.h.Start(ctx, goal("g"))
	if err != nil {
		t.Fatal(err)
	}
	if res := r.Wait(); res.Outcome != OutcomeCancelled || res.Steps != 1 {
		t.Fatalf("first run: %s after %d steps", res.Outcome, res.Steps)
	}
	if err := f.store.SetOutcome(context.Background(), r.ID(), string(OutcomeRunning), "", "", nil); err != nil {
		t.Fatal(err)
	}
	f.prov.turns[""][1] = orig
	r2, err := f.harness(t).Resume(context.Background(), r.ID())
	if err != nil {
		t.Fatal(err)
	}
	r2.Wait()
	reqs := f.prov.requests()
	first, last := reqs[0].Messages, reqs[len(reqs)-1].Messages
	if len(last) != 3 || last[0].Role != model.RoleUser || last[0].Text != first[0].Text || last[1].Role != model.RoleAssistant {
		t.Errorf("resumed request %+v, want the first message %q, then the restored step", last, first[0].Text)
	}
}
