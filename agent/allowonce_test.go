package agent

import (
	"context"
	"strings"
	"testing"

	"github.com/ioh-lsp/ioh-lsp/agent/policy"
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

// A grant is an allow in the layer of the user's answers: a deny rule
// still wins (the built-in protection of .git).
func TestGrantDoesNotBeatADenyRule(t *testing.T) {
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
