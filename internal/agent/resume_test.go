package agent

import (
	"context"
	"errors"
	"sort"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/ioh-lsp/ioh-lsp/internal/agent/contract"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/event"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/model"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/tools"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/trace"
)

// The wall budget runs from the run's first start: time spent stopped
// counts, and a resumed run past it ends without another model call.
func TestWallBudgetSpansResume(t *testing.T) {
	f := newFixture(t, nil, map[string][]turn{"": {
		say(10, "run", args{"argv": []string{"true"}}),
		say(10, "finish", args{"summary": "s"}),
	}})
	f.appr.act = Decision{Answer: Defer}
	c := goal("slow")
	c.Budget.Wall = 200 * time.Millisecond
	res := f.run(t, c)
	if res.Outcome != OutcomeAwaitingApproval {
		t.Fatalf("outcome %s", res.Outcome)
	}
	row, _ := f.store.Run(context.Background(), res.RunID)
	for time.Since(row.FirstStarted) < c.Budget.Wall {
		time.Sleep(c.Budget.Wall / 4)
	}
	f.appr.act = Decision{Answer: AllowOnce}
	r, err := f.harness(t).Resume(context.Background(), res.RunID)
	if err != nil {
		t.Fatal(err)
	}
	if got := r.Wait(); got.Outcome != OutcomeBudgetExceeded {
		t.Errorf("resumed past the wall budget: %s", got.Outcome)
	}
	if f.prov.calls != 1 {
		t.Errorf("%d model calls, want 1", f.prov.calls)
	}
}

// Two processes never drive one run: while a run is in flight, a resume
// from another harness (another lease owner) is refused.
func TestLeaseKeepsSecondDriverOut(t *testing.T) {
	f := newFixture(t, nil, nil)
	inCall := make(chan struct{})
	release := make(chan struct{})
	prov := providerFunc(func(ctx context.Context, req *model.Request) (*model.Response, error) {
		close(inCall)
		<-release
		return say(10, "finish", args{"summary": "s"}).resp, nil
	})
	mk := func() *Harness {
		h, err := New(Options{Root: f.root, Store: f.store, Providers: func(*contract.Contract, RetryReporter) (model.Provider, error) { return prov, nil }})
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	h1 := mk()
	r, err := h1.Start(context.Background(), goal("g"))
	if err != nil {
		t.Fatal(err)
	}
	<-inCall
	if _, err := mk().Resume(context.Background(), r.ID()); !errors.Is(err, trace.ErrLeased) {
		t.Errorf("second driver: %v, want ErrLeased", err)
	}
	if _, err := h1.Resume(context.Background(), r.ID()); !errors.Is(err, trace.ErrLeased) {
		t.Errorf("second driver in the same harness: %v, want ErrLeased", err)
	}
	close(release)
	if res := r.Wait(); res.Outcome != OutcomeUnverified {
		t.Errorf("outcome %s", res.Outcome)
	}
}

// A run that crashed after some steps resumes with its transcript, change
// set and totals; the redone step is charged once.
func TestResumeRestoresTranscriptAndChanges(t *testing.T) {
	f := newFixture(t, map[string]string{"a.txt": "one\n"}, map[string][]turn{"": {
		say(100, "edit_file", args{"path": "a.txt", "old": "one", "new": "one\ntwo"}),
		say(200, "read_file", args{"path": "a.txt"}),
		say(300, "finish", args{"summary": "s"}),
	}})
	ctx, cancel := context.WithCancel(context.Background())
	// Cancel the first run inside its second model call: step 1 is
	// committed, step 2 is not.
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
	// A cancelled run is over; to simulate a crash, mark it running again
	// as a killed process would have left it.
	if err := f.store.SetOutcome(context.Background(), r.ID(), string(OutcomeRunning), "", "", nil); err != nil {
		t.Fatal(err)
	}
	f.prov.turns[""][1] = orig
	r2, err := f.harness(t).Resume(context.Background(), r.ID())
	if err != nil {
		t.Fatal(err)
	}
	res := r2.Wait()
	if res.Outcome != OutcomeApplied || f.read(t, "a.txt") != "one\ntwo\n" {
		t.Fatalf("resumed: %s, a.txt %q", res.Outcome, f.read(t, "a.txt"))
	}
	if res.Usage.InputTokens != 600 {
		t.Errorf("input tokens %d, want 600 (each step once)", res.Usage.InputTokens)
	}
	reqs := f.prov.requests()
	last := reqs[len(reqs)-1]
	if got := last.Messages[len(last.Messages)-1].ToolResults[0].Content; got != tools.NumberLines("one\ntwo\n") {
		t.Errorf("the resumed read saw %q, not the restored change set", got)
	}
}

// A crash while a sub-agent works: on resume the orphaned child is closed
// as cancelled and the parent redoes the spawning step with a new child.
func TestResumeRedoesSpawn(t *testing.T) {
	f := newFixture(t, nil, map[string][]turn{
		"":      {say(10, "spawn_agent", args{"goal": "child"}), say(10, "finish", args{"summary": "s"})},
		"child": {say(10, "write_file", args{"path": "c.txt", "content": "c"}), say(10, "finish", args{"summary": "c"})},
	})
	ctx, cancel := context.WithCancel(context.Background())
	orig := f.prov.turns["child"][0]
	f.prov.turns["child"][0] = turn{fn: func(*model.Request) (*model.Response, error) {
		cancel()
		return nil, context.Canceled
	}}
	r, err := f.h.Start(ctx, goal("parent"))
	if err != nil {
		t.Fatal(err)
	}
	r.Wait()
	rows, _ := f.store.Tree(context.Background(), r.ID())
	for _, row := range rows { // as a SIGKILL would have left them
		f.store.SetOutcome(context.Background(), row.ID, string(OutcomeRunning), "", "", nil)
	}
	f.prov.turns["child"][0] = orig
	r2, err := f.harness(t).Resume(context.Background(), r.ID())
	if err != nil {
		t.Fatal(err)
	}
	if res := r2.Wait(); res.Outcome != OutcomeApplied || f.read(t, "c.txt") != "c" {
		t.Fatalf("resumed: %s (%v)", res.Outcome, res.Err)
	}
	rows, _ = f.store.Tree(context.Background(), r.ID())
	var outcomes []string
	for _, row := range rows {
		outcomes = append(outcomes, row.Outcome)
	}
	sort.Strings(outcomes)
	if diff := cmp.Diff(outcomes, []string{"applied", "cancelled", "unverified"}); diff != "" {
		t.Errorf("tree outcomes (-got +want):\n%s", diff)
	}
	// The orphan's closing is emitted too, so a listing fed by the events
	// (the language server's ioh.runs) does not keep it running.
	var closed []string
	f.sink.mu.Lock()
	for _, e := range f.sink.ev {
		if o, ok := e.Payload.(*event.Outcome); ok && e.Parent == r.ID() && o.Reason != "" {
			closed = append(closed, o.Outcome+": "+o.Reason)
		}
	}
	f.sink.mu.Unlock()
	if diff := cmp.Diff(closed, []string{"cancelled: interrupted; its parent redoes the step"}); diff != "" {
		t.Errorf("emitted closings of orphaned sub-agents (-got +want):\n%s", diff)
	}
}
