package agent

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ioh-lsp/ioh-lsp/internal/agent/contract"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/event"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/model"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/tools"
	"github.com/ioh-lsp/ioh-lsp/internal/workspace"
)

func TestRunEditsVerifiesAndApplies(t *testing.T) {
	f := newFixture(t, map[string]string{"a.txt": "hello world\n", "b.txt": "bee\n"}, map[string][]turn{"": {
		say(100, "read_file", args{"path": "a.txt"}, "read_file", args{"path": "b.txt"}, "list_dir", args{}),
		say(200, "edit_file", args{"path": "a.txt", "old": "world", "new": "there"}),
		say(300, "finish", args{"summary": "greeted"}),
	}})
	c := goal("greet")
	c.Verify.Checks = []contract.Check{{Name: "grep", Run: []string{"grep", "-q", "there", "a.txt"}}}
	res := f.run(t, c)
	if res.Outcome != OutcomeApplied {
		t.Fatalf("outcome %s (%v), want applied", res.Outcome, res.Err)
	}
	if got := f.read(t, "a.txt"); got != "hello there\n" {
		t.Errorf("a.txt = %q", got)
	}
	if diff := cmp.Diff(res.Usage, model.Usage{InputTokens: 600, OutputTokens: 60}); diff != "" {
		t.Errorf("usage (-got +want):\n%s", diff)
	}
	// The parallel reads answer in call order.
	reqs := f.prov.requests()
	rs := reqs[1].Messages[2].ToolResults
	if rs[0].Content != tools.NumberLines("hello world\n") || rs[1].Content != tools.NumberLines("bee\n") || !strings.Contains(rs[2].Content, "b.txt 4") {
		t.Errorf("results out of order: %+v", rs)
	}
	evs, err := f.store.Events(context.Background(), res.RunID)
	if err != nil {
		t.Fatal(err)
	}
	last := evs[len(evs)-1]
	if o, ok := last.Payload.(*event.Outcome); !ok || o.Outcome != "applied" {
		t.Errorf("last event %+v", last)
	}
	var verdicts int
	for _, e := range evs {
		if e.Type == event.TypePolicy {
			verdicts++
			fields, err := e.Fields()
			if err != nil {
				t.Fatal(err)
			}
			has := map[string]bool{}
			for _, f := range fields {
				has[f.Key] = true
			}
			for _, k := range []string{"act", "target", "effect", "rule", "layer"} {
				if !has[k] {
					t.Errorf("policy event lacks %s: %+v", k, e)
				}
			}
		}
	}
	if verdicts != 5 {
		t.Errorf("%d policy events, want 5 (3 reads, the edit's write and read)", verdicts)
	}
}

func TestPromptPrefixIsStable(t *testing.T) {
	var turns []turn
	for i := 0; i < 5; i++ {
		turns = append(turns, say(10, "read_file", args{"path": "a.txt"}, "grep", args{"pattern": "x"}))
	}
	turns = append(turns, say(10, "finish", args{"summary": "s"}))
	f := newFixture(t, map[string]string{"a.txt": "x\n"}, map[string][]turn{"": turns})
	f.run(t, goal("look"))
	reqs := f.prov.requests()
	for i := 1; i < len(reqs); i++ {
		prev, cur := reqs[i-1], reqs[i]
		if prev.System != cur.System {
			t.Fatalf("system prompt changed at request %d", i)
		}
		if diff := cmp.Diff(cur.Messages[:len(prev.Messages)], prev.Messages); diff != "" {
			t.Fatalf("request %d does not extend request %d:\n%s", i, i-1, diff)
		}
	}
}

func TestPolicyDeniesProtectedAndScope(t *testing.T) {
	f := newFixture(t, map[string]string{"src/a.go": "package a\n", "docs/x.md": "x\n"}, map[string][]turn{"": {
		say(10, "write_file", args{"path": ".git/config", "content": "evil"},
			"write_file", args{"path": "docs/x.md", "content": "y"},
			"write_file", args{"path": "src/a_test.go", "content": "t"},
			"write_file", args{"path": "src/b.go", "content": "package a\n"}),
		say(10, "finish", args{"summary": "done"}),
	}})
	c := goal("scoped")
	c.Scope.Write = []string{"src/**"}
	c.Verify.Protect = []string{"src/a_test.go"}
	res := f.run(t, c)
	if res.Outcome != OutcomeApplied {
		t.Fatalf("outcome %s (%v)", res.Outcome, res.Err)
	}
	rs := f.prov.requests()[1].Messages[2].ToolResults
	var errs []bool
	for _, r := range rs {
		errs = append(errs, r.IsError)
	}
	if diff := cmp.Diff(errs, []bool{true, true, true, false}); diff != "" {
		t.Errorf("denials (-got +want):\n%s\n%+v", diff, rs)
	}
	evs, _ := f.store.Events(context.Background(), res.RunID)
	layers := map[string]string{}
	for _, e := range evs {
		if p, ok := e.Payload.(*event.Policy); ok {
			layers[p.Target] = p.Layer + "/" + p.Effect
		}
	}
	// verify.protect is a built-in protection (a layer of its own that no
	// "Allow once" grant lifts), the scope a task rule.
	want := map[string]string{".git/config": "builtin/deny", "docs/x.md": "task/deny", "src/a_test.go": "builtin/deny", "src/b.go": "default/allow"}
	if diff := cmp.Diff(layers, want); diff != "" {
		t.Errorf("verdicts (-got +want):\n%s", diff)
	}
}

func TestDeferredActResumesWithAnswer(t *testing.T) {
	f := newFixture(t, map[string]string{"a.txt": "a\n"}, map[string][]turn{"": {
		say(10, "read_file", args{"path": "a.txt"}, "run", args{"argv": []string{"true"}}),
		say(10, "run", args{"argv": []string{"true"}}),
		say(10, "finish", args{"summary": "ran"}),
	}})
	f.appr.act = Decision{Answer: Defer}
	res := f.run(t, goal("run things"))
	if res.Outcome != OutcomeAwaitingApproval {
		t.Fatalf("outcome %s, want awaiting_approval", res.Outcome)
	}
	if res.Outcome.ExitCode() != 4 {
		t.Errorf("exit code %d", res.Outcome.ExitCode())
	}
	// A second process answers "allow for this run": the second run call
	// is then not asked again.
	f.appr.act = Decision{Answer: AllowRun}
	h2 := f.harness(t)
	r, err := h2.Resume(context.Background(), res.RunID)
	if err != nil {
		t.Fatal(err)
	}
	res2 := r.Wait()
	if res2.Outcome != OutcomeUnverified {
		t.Fatalf("resumed outcome %s (%v)", res2.Outcome, res2.Err)
	}
	if len(f.appr.acts) != 2 {
		t.Errorf("approver asked %d times, want 2 (deferred, then allow for the run)", len(f.appr.acts))
	}
	if f.prov.calls != 3 {
		t.Errorf("%d model calls, want 3 (the deferred turn is not re-asked)", f.prov.calls)
	}
	reqs := f.prov.requests()
	last := reqs[len(reqs)-1].Messages
	if n := len(last[2].ToolResults); n != 2 {
		t.Errorf("deferred turn answered %d calls, want 2", n)
	}
	// Resuming a finished run is a no-op.
	r3, err := h2.Resume(context.Background(), res.RunID)
	if err != nil {
		t.Fatal(err)
	}
	if got := r3.Wait(); got.Outcome != OutcomeUnverified || f.prov.calls != 3 {
		t.Errorf("second resume: %s, %d calls", got.Outcome, f.prov.calls)
	}
}

func TestBudgetRefusesStepBeforeSending(t *testing.T) {
	loop := func() []turn {
		var ts []turn
		for i := 0; i < 20; i++ {
			ts = append(ts, say(1000, "write_file", args{"path": "f.txt", "content": strings.Repeat("x", i+1)}))
		}
		return ts
	}
	tests := []struct {
		name   string
		budget contract.Budget
		calls  int
	}{
		{"steps", contract.Budget{Steps: 3}, 3},
		// Each call spends 1100 tokens; the next is refused once its
		// estimate (its input, the tool specs included, plus at least 64
		// output tokens) no longer fits.
		{"tokens", contract.Budget{Tokens: 12000}, 9},
		// Each call costs $0.0015, but a call may produce up to 8192 output
		// tokens ($0.041), so it is sent only while that much is left
		// (with its input's cost).
		{"cost", contract.Budget{CostUSD: 0.05}, 5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, nil, map[string][]turn{"": loop()})
			c := goal("spend")
			c.Budget = tt.budget
			res := f.run(t, c)
			if res.Outcome != OutcomeBudgetExceeded {
				t.Fatalf("outcome %s (%v)", res.Outcome, res.Err)
			}
			if f.prov.calls != tt.calls {
				t.Errorf("%d calls sent, want %d", f.prov.calls, tt.calls)
			}
			if tt.budget.Tokens > 0 && res.Usage.Total() > tt.budget.Tokens {
				t.Errorf("spent %d tokens over a budget of %d", res.Usage.Total(), tt.budget.Tokens)
			}
			if tt.budget.CostUSD > 0 && res.CostUSD > tt.budget.CostUSD {
				t.Errorf("spent $%f over a budget of $%f", res.CostUSD, tt.budget.CostUSD)
			}
		})
	}
}

func TestStallReplansThenStops(t *testing.T) {
	var ts []turn
	for i := 0; i < 10; i++ {
		ts = append(ts, say(10, "read_file", args{"path": "a.txt"}))
	}
	f := newFixture(t, map[string]string{"a.txt": "a"}, map[string][]turn{"": ts})
	res := f.run(t, goal("loop"))
	if res.Outcome != OutcomeStalled {
		t.Fatalf("outcome %s", res.Outcome)
	}
	if f.prov.calls != 6 {
		t.Errorf("%d calls, want 6 (3 to the replan prompt, 3 more)", f.prov.calls)
	}
	msgs := f.prov.requests()[3].Messages
	if !strings.Contains(msgs[len(msgs)-1].Text, "replan") {
		t.Errorf("no replan prompt after the third repeat")
	}
}

func TestContextOverflowCompactsOnce(t *testing.T) {
	overflow := &model.Error{Class: model.ClassContextOverflow, Provider: "script", Err: errors.New("too long")}
	var sawElided bool
	f := newFixture(t, map[string]string{"a.txt": "content"}, map[string][]turn{"": {
		say(10, "read_file", args{"path": "a.txt"}),
		say(10, "read_file", args{"path": "a.txt", "limit": 1}),
		{fn: func(req *model.Request) (*model.Response, error) {
			if got := req.Messages[2].ToolResults[0].Content; got != "[result hidden to save context: read_file a.txt → lines 1–1, 15 B; call again to see it]" {
				return nil, overflow
			}
			sawElided = true
			return say(10, "finish", args{"summary": "ok"}).resp, nil
		}},
	}})
	res := f.run(t, goal("big"))
	if res.Outcome != OutcomeUnverified || !sawElided {
		t.Fatalf("outcome %s (%v), compacted %v", res.Outcome, res.Err, sawElided)
	}
	f2 := newFixture(t, nil, map[string][]turn{"": {{err: overflow}}})
	if res := f2.run(t, goal("x")); res.Outcome != OutcomeProviderFailed {
		t.Errorf("overflow with nothing to compact: %s", res.Outcome)
	}
}

func TestVerificationFailureIsFedBack(t *testing.T) {
	f := newFixture(t, map[string]string{"n.txt": "1\n"}, map[string][]turn{"": {
		say(10, "finish", args{"summary": "premature"}),
		say(10, "write_file", args{"path": "n.txt", "content": "2\n"}),
		say(10, "finish", args{"summary": "fixed"}),
	}})
	c := goal("make it 2")
	c.Verify.Checks = []contract.Check{{Name: "two", Shell: "grep -qx 2 n.txt"}}
	res := f.run(t, c)
	if res.Outcome != OutcomeApplied || res.Report == nil || !res.Report.Passed {
		t.Fatalf("outcome %s (%v)", res.Outcome, res.Err)
	}
	fb := f.prov.requests()[1].Messages[2].ToolResults[0]
	if !fb.IsError || !strings.Contains(fb.Content, `check "two" failed`) {
		t.Errorf("feedback %+v", fb)
	}
}

func TestProposalAnswers(t *testing.T) {
	tests := []struct {
		answer  Answer
		outcome Outcome
		content string
	}{
		{AllowOnce, OutcomeApplied, "new"},
		{Deny, OutcomeRejected, "old"},
		{Defer, OutcomeAwaitingApproval, "old"},
		{Applied, OutcomeApplied, "old"}, // the approver applied it itself
	}
	for _, tt := range tests {
		t.Run(string(tt.answer), func(t *testing.T) {
			f := newFixture(t, map[string]string{"f": "old"}, map[string][]turn{"": {
				say(10, "write_file", args{"path": "f", "content": "new"}),
				say(10, "finish", args{"summary": "s"}),
			}})
			f.appr.change = Decision{Answer: tt.answer}
			res := f.run(t, goal("g"))
			if res.Outcome != tt.outcome {
				t.Fatalf("outcome %s, want %s", res.Outcome, tt.outcome)
			}
			if got := f.read(t, "f"); got != tt.content {
				t.Errorf("file %q, want %q", got, tt.content)
			}
		})
	}
}

func TestApproveAndRejectLater(t *testing.T) {
	for _, approve := range []bool{true, false} {
		f := newFixture(t, map[string]string{"f": "old"}, map[string][]turn{"": {
			say(10, "write_file", args{"path": "f", "content": "new"}),
			say(10, "finish", args{"summary": "s"}),
		}})
		f.appr.change = Decision{Answer: Defer}
		res := f.run(t, goal("g"))
		h2 := f.harness(t)
		var got *Result
		var err error
		if approve {
			got, err = h2.Approve(context.Background(), res.RunID)
		} else {
			got, err = h2.Reject(context.Background(), res.RunID, "nope")
		}
		if err != nil {
			t.Fatal(err)
		}
		want, content := OutcomeApplied, "new"
		if !approve {
			want, content = OutcomeRejected, "old"
		}
		if got.Outcome != want || f.read(t, "f") != content {
			t.Errorf("approve=%v: %s, file %q", approve, got.Outcome, f.read(t, "f"))
		}
		if _, err := h2.Approve(context.Background(), res.RunID); !errors.Is(err, ErrNotPending) {
			t.Errorf("second approve: %v, want ErrNotPending", err)
		}
	}
}

func TestProviderRetriesAreTraced(t *testing.T) {
	f := newFixture(t, nil, nil)
	var report RetryReporter
	prov := providerFunc(func(ctx context.Context, req *model.Request) (*model.Response, error) {
		report(RetryEvent{Provider: "p", Attempt: 1, Class: model.ClassRateLimited, Err: "429", Next: ""})
		return say(10, "finish", args{"summary": "s"}).resp, nil
	})
	h, err := New(Options{Root: f.root, Store: f.store, Providers: func(_ *contract.Contract, r RetryReporter) (model.Provider, error) {
		report = r
		return prov, nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	r, err := h.Start(context.Background(), goal("g"))
	if err != nil {
		t.Fatal(err)
	}
	r.Wait()
	evs, _ := f.store.Events(context.Background(), r.ID())
	var retries []string
	for _, e := range evs {
		if p, ok := e.Payload.(*event.Retry); ok {
			retries = append(retries, fmt.Sprintf("step %d %v", e.Step, p.Class))
		}
	}
	if diff := cmp.Diff(retries, []string{"step 1 rate_limited"}); diff != "" {
		t.Errorf("retry events (-got +want):\n%s", diff)
	}
}

// A deferral in the middle of parallel reads answers the reads before it
// and asks again about the rest on resume.
func TestDeferInParallelBatch(t *testing.T) {
	f := newFixture(t, map[string]string{"a.txt": "a\n", ".env": "SECRET=1\n", "b.txt": "b\n"}, map[string][]turn{"": {
		say(10, "read_file", args{"path": "a.txt"}, "read_file", args{"path": ".env"}, "read_file", args{"path": "b.txt"}),
		say(10, "finish", args{"summary": "s"}),
	}})
	f.appr.act = Decision{Answer: Defer}
	res := f.run(t, goal("read"))
	if res.Outcome != OutcomeAwaitingApproval {
		t.Fatalf("outcome %s", res.Outcome)
	}
	f.appr.act = Decision{Answer: Deny, Reason: "private"}
	r, err := f.harness(t).Resume(context.Background(), res.RunID)
	if err != nil {
		t.Fatal(err)
	}
	// It then finishes with nothing changed after a denial: denied.
	if got := r.Wait(); got.Outcome != OutcomeDenied {
		t.Fatalf("resumed: %s (%v)", got.Outcome, got.Err)
	}
	reqs := f.prov.requests()
	var got []string
	for _, tr := range reqs[len(reqs)-1].Messages[2].ToolResults {
		got = append(got, fmt.Sprintf("%s %v %s", tr.CallID, tr.IsError, strings.SplitN(tr.Content, ":", 2)[0]))
	}
	want := []string{"call_1_0 false      1\ta\n", "call_1_1 true denied by the user", "call_1_2 false      1\tb\n"}
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("results (-got +want):\n%s", diff)
	}
}

// A pending change whose file changed on disk since is not applied
// blindly: approving it reports the conflict, leaves the file alone and
// the change pending.
func TestApproveRefusesConflict(t *testing.T) {
	f := newFixture(t, map[string]string{"f": "old"}, map[string][]turn{"": {
		say(10, "edit_file", args{"path": "f", "old": "old", "new": "new"}),
		say(10, "finish", args{"summary": "s"}),
	}})
	f.appr.change = Decision{Answer: Defer}
	res := f.run(t, goal("g"))
	if err := os.WriteFile(filepath.Join(f.dir, "f"), []byte("edited by hand"), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := f.harness(t).Approve(context.Background(), res.RunID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Outcome != OutcomeAwaitingApproval || !got.Pending || !errors.Is(got.Err, workspace.ErrConflict) {
		t.Errorf("outcome %s pending %v (%v), want the change still pending with a conflict", got.Outcome, got.Pending, got.Err)
	}
	if f.read(t, "f") != "edited by hand" {
		t.Errorf("the file was overwritten: %q", f.read(t, "f"))
	}
	// The change stays resolvable: with the file as the agent saw it, the
	// same approval applies it.
	if err := os.WriteFile(filepath.Join(f.dir, "f"), []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err = f.harness(t).Approve(context.Background(), res.RunID)
	if err != nil || got.Outcome != OutcomeApplied || f.read(t, "f") != "new" {
		t.Errorf("approve after the conflict is resolved: %v, %v, f = %q; want applied", got, err, f.read(t, "f"))
	}
}

func TestVerificationEnds(t *testing.T) {
	tests := []struct {
		name     string
		redGreen bool
		check    string
		calls    int
	}{
		// Fails every time: fed back twice, the third failure ends the run.
		{"keeps failing", false, "exit 1", 3},
		// Passes before the change too: proves nothing, ends at once.
		{"red/green", true, "true", 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var ts []turn
			for i := 0; i < 5; i++ {
				ts = append(ts, say(10, "write_file", args{"path": "x", "content": fmt.Sprint(i)}, "finish", args{"summary": "s"}))
			}
			f := newFixture(t, nil, map[string][]turn{"": ts})
			c := goal("g")
			c.Verify = contract.Verify{RedGreen: tt.redGreen, Checks: []contract.Check{{Name: "c", Shell: tt.check}}}
			res := f.run(t, c)
			if res.Outcome != OutcomeVerificationFailed || res.Outcome.ExitCode() != 1 {
				t.Errorf("outcome %s", res.Outcome)
			}
			if f.prov.calls != tt.calls {
				t.Errorf("%d calls, want %d", f.prov.calls, tt.calls)
			}
			if _, err := os.Stat(filepath.Join(f.dir, "x")); err == nil {
				t.Error("an unverified change was applied")
			}
		})
	}
}
