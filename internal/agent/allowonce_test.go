package agent

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ioh-lsp/ioh-lsp/internal/agent/contract"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/event"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/policy"
)

// A grant allows its act exactly once, on the same harness: the first
// `run true` runs without a question, the second is asked about as usual;
// a grant for another target allows nothing.
func TestStartAllowingOnceAllowsTheActOnce(t *testing.T) {
	runTrue := args{"argv": []string{"true"}}
	f := newFixture(t, map[string]string{"a.txt": "a\n"}, map[string][]turn{"": {
		say(10, "run", runTrue),
		say(10, "run", runTrue),
		say(10, "finish", args{"summary": "ran"}),
	}})
	f.appr.act = Decision{Answer: Deny, Reason: "no"}
	r, err := f.h.StartAllowingOnce(context.Background(), goal("run true twice"), Grant{Act: policy.ActExec, Target: "true"})
	if err != nil {
		t.Fatal(err)
	}
	res := r.Wait()
	if n := len(f.appr.acts); n != 1 {
		t.Fatalf("approver asked %d times, want 1 (the second run only)", n)
	}
	if f.appr.acts[0].Step != 2 {
		t.Errorf("asked at step %d, want 2", f.appr.acts[0].Step)
	}
	_ = res
	// The model saw the granted call run and the second refused.
	reqs := f.prov.requests()
	if len(reqs) < 3 {
		t.Fatalf("%d model calls, want 3", len(reqs))
	}
	first, second := reqs[1].Messages[2].ToolResults, reqs[2].Messages[4].ToolResults
	if len(first) != 1 || first[0].IsError {
		t.Errorf("the granted run true answered %+v, want it run", first)
	}
	if len(second) != 1 || !second[0].IsError {
		t.Errorf("the second run true answered %+v, want it refused", second)
	}

	// Control: the same script without a grant is asked twice.
	f2 := newFixture(t, map[string]string{"a.txt": "a\n"}, map[string][]turn{"": f.prov.turns[""]})
	f2.appr.act = Decision{Answer: Deny, Reason: "no"}
	f2.run(t, goal("run true twice"))
	if n := len(f2.appr.acts); n != 2 {
		t.Errorf("without a grant the approver was asked %d times, want 2", n)
	}

	// A grant names an exact target: "true x" is not "true".
	f3 := newFixture(t, map[string]string{"a.txt": "a\n"}, map[string][]turn{"": f.prov.turns[""]})
	f3.appr.act = Decision{Answer: Deny, Reason: "no"}
	r3, err := f3.h.StartAllowingOnce(context.Background(), goal("run true twice"), Grant{Act: policy.ActExec, Target: "true x"})
	if err != nil {
		t.Fatal(err)
	}
	r3.Wait()
	if n := len(f3.appr.acts); n != 2 {
		t.Errorf("with a grant for another target the approver was asked %d times, want 2", n)
	}
}

// A grant never lifts the built-in layer: a write of .git/config is
// denied by the built-in protection with or without it.
func TestGrantDoesNotBeatTheBuiltinLayer(t *testing.T) {
	f := newFixture(t, map[string]string{"a.txt": "a\n"}, map[string][]turn{"": {
		say(10, "write_file", args{"path": ".git/config", "content": "x"}),
		say(10, "finish", args{"summary": "gave up"}),
	}})
	r, err := f.h.StartAllowingOnce(context.Background(), goal("write git config"), Grant{Act: policy.ActWrite, Target: ".git/config"})
	if err != nil {
		t.Fatal(err)
	}
	r.Wait()
	reqs := f.prov.requests()
	if len(reqs) < 2 || len(reqs[1].Messages) < 3 {
		t.Fatalf("the model was not answered after its write (%d requests)", len(reqs))
	}
	res := reqs[1].Messages[2].ToolResults
	if len(res) != 1 || !res[0].IsError || !strings.Contains(res[0].Content, "denied by policy") || !strings.Contains(res[0].Content, "builtin") {
		t.Fatalf("write of .git/config with a grant answered %+v, want denied by the builtin layer", res)
	}
}

// policyOf lists the run's policy verdicts on target, as layer/effect.
func policyOf(t *testing.T, f *fixture, run, target string) []string {
	t.Helper()
	evs, err := f.store.Events(context.Background(), run)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range evs {
		if p, ok := e.Payload.(*event.Policy); ok && p.Target == target {
			out = append(out, p.Layer+"/"+p.Effect)
		}
	}
	return out
}

// The user's grant outranks the task's scope: a write outside scope.write
// that the task denies is allowed once, its policy event naming the layer
// "grant", and the same write a second time is denied by the task again.
// Control: without the grant both writes are denied.
func TestGrantLiftsTheTaskScopeOnce(t *testing.T) {
	turns := map[string][]turn{"": {
		say(10, "write_file", args{"path": "notes/a.md", "content": "granted\n"}),
		say(10, "write_file", args{"path": "notes/a.md", "content": "again\n"}),
		say(10, "finish", args{"summary": "wrote the doc"}),
	}}
	scoped := func() *contract.Contract {
		c := goal("document it")
		c.Scope.Write = []string{"src/**"}
		return c
	}
	files := map[string]string{"src/a.go": "package a\n", "notes/a.md": "old\n"}

	ctl := newFixture(t, files, turns)
	res := ctl.run(t, scoped())
	if got := policyOf(t, ctl, res.RunID, "notes/a.md"); !slices.Equal(got, []string{"task/deny", "task/deny"}) {
		t.Fatalf("control: without a grant the writes were judged %v, want denied twice by the task", got)
	}

	f := newFixture(t, files, turns)
	r, err := f.h.StartAllowingOnce(context.Background(), scoped(), Grant{Act: policy.ActWrite, Target: "notes/a.md"})
	if err != nil {
		t.Fatal(err)
	}
	res = r.Wait()
	if got := policyOf(t, f, res.RunID, "notes/a.md"); !slices.Equal(got, []string{"grant/allow", "task/deny"}) {
		t.Errorf("with a grant the writes were judged %v, want allowed by the grant, then denied by the task", got)
	}
	reqs := f.prov.requests()
	if len(reqs) < 3 {
		t.Fatalf("%d model calls, want 3", len(reqs))
	}
	first, second := reqs[1].Messages[2].ToolResults, reqs[2].Messages[4].ToolResults
	if len(first) != 1 || first[0].IsError {
		t.Errorf("the granted write answered %+v, want it done", first)
	}
	if len(second) != 1 || !second[0].IsError || !strings.Contains(second[0].Content, "denied by policy") {
		t.Errorf("the second write answered %+v, want it denied", second)
	}
	if res.Outcome != OutcomeApplied {
		t.Fatalf("outcome %s (%v), want applied", res.Outcome, res.Err)
	}
	if b, _ := os.ReadFile(filepath.Join(f.dir, "notes", "a.md")); string(b) != "granted\n" {
		t.Errorf("notes/a.md = %q after the run, want the granted write", b)
	}
}

// A grant covers the act's final form only: a grant of notes/a.md neither
// opens notes/../lib/a.md (lib/a.md) nor, when notes/a.md is a symlink to a
// file outside the scope, the file it resolves to. Control: the same
// grant on a plain notes/a.md allows the write.
func TestGrantCoversOnlyTheFinalForm(t *testing.T) {
	turns := map[string][]turn{"": {
		say(10, "write_file", args{"path": "notes/../lib/a.md", "content": "x\n"},
			"write_file", args{"path": "notes/a.md", "content": "y\n"}),
		say(10, "finish", args{"summary": "tried"}),
	}}
	c := goal("document it")
	c.Scope.Write = []string{"src/**"}
	g := Grant{Act: policy.ActWrite, Target: "notes/a.md"}

	plain := newFixture(t, map[string]string{"src/a.go": "package a\n", "notes/a.md": "old\n"}, turns)
	r, err := plain.h.StartAllowingOnce(context.Background(), c, g)
	if err != nil {
		t.Fatal(err)
	}
	res := r.Wait()
	if got := policyOf(t, plain, res.RunID, "notes/a.md"); !slices.Equal(got, []string{"grant/allow"}) {
		t.Fatalf("control: a plain notes/a.md with its grant was judged %v, want allowed by the grant", got)
	}
	if got := policyOf(t, plain, res.RunID, "lib/a.md"); len(got) == 0 || got[0] != "task/deny" {
		t.Errorf("notes/../lib/a.md with a grant of notes/a.md was judged %v, want denied by the task", got)
	}

	linked := newFixture(t, map[string]string{"src/a.go": "package a\n", "lib/b.md": "keep\n"}, turns)
	if err := os.MkdirAll(filepath.Join(linked.dir, "notes"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../lib/b.md", filepath.Join(linked.dir, "notes", "a.md")); err != nil {
		t.Fatal(err)
	}
	r, err = linked.h.StartAllowingOnce(context.Background(), c, g)
	if err != nil {
		t.Fatal(err)
	}
	res = r.Wait()
	if got := policyOf(t, linked, res.RunID, "notes/a.md"); len(got) == 0 || got[0] != "task/deny" {
		t.Errorf("notes/a.md, a link to lib/b.md, with a grant of notes/a.md was judged %v, want denied by the task", got)
	}
	if b, _ := os.ReadFile(filepath.Join(linked.dir, "lib", "b.md")); string(b) != "keep\n" {
		t.Errorf("lib/b.md = %q, want it untouched", b)
	}
}
