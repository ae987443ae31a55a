package agent

import (
	"strings"
	"testing"

	"github.com/ioh-lsp/ioh-lsp/internal/agent/policy"
)

// A tool that reveals a file's content is judged as a read of it too:
// with reads of private/** denied (writes not), renaming private/k.txt to
// an ordinary name and reading that, editing it (whether old occurs says
// what it holds) and patching it (whether a hunk applies) are all
// refused, and its content reaches no tool result; the same three on an
// ordinary file succeed (control).
func TestToolsThatRevealContentAreReads(t *testing.T) {
	patch := func(path, old string) string {
		return "--- a/" + path + "\n+++ b/" + path + "\n@@ -1 +1 @@\n-" + old + "\n+changed\n"
	}
	f := newFixture(t, map[string]string{
		"private/k.txt": "denied-content\n",
		"private/p.txt": "denied-content\n",
		"private/e.txt": "denied-content\n",
		"a.txt":         "ordinary\n",
		"b.txt":         "ordinary\n",
		"c.txt":         "ordinary\n",
	}, map[string][]turn{"": {
		say(10, "rename_file", args{"from": "private/k.txt", "to": "pub.txt"}),
		say(10, "read_file", args{"path": "pub.txt"}),
		say(10, "edit_file", args{"path": "private/e.txt", "old": "denied-content", "new": "x"}),
		say(10, "apply_patch", args{"patch": patch("private/p.txt", "denied-content")}),
		say(10, "rename_file", args{"from": "a.txt", "to": "a2.txt"}),
		say(10, "edit_file", args{"path": "b.txt", "old": "ordinary", "new": "x"}),
		say(10, "apply_patch", args{"patch": patch("c.txt", "ordinary")}),
		say(10, "finish", args{"summary": "done"}),
	}})
	c := goal("look")
	c.Policy.Rules = []policy.Rule{{Act: policy.ActRead, Effect: policy.Deny, Pattern: "private/**"}}
	res := f.run(t, c)
	if res.Outcome != OutcomeApplied && res.Outcome != OutcomeUnverified {
		t.Fatalf("outcome %s (%v)", res.Outcome, res.Err)
	}
	reqs := f.prov.requests()
	var results []string
	for _, m := range reqs[len(reqs)-1].Messages {
		for _, r := range m.ToolResults {
			results = append(results, r.Content)
		}
	}
	if len(results) != 7 {
		t.Fatalf("%d tool results, want 7: %q", len(results), results)
	}
	for i, r := range results {
		if strings.Contains(r, "denied-content") {
			t.Errorf("result %d shows the read-denied content: %q", i, r)
		}
	}
	for i := 0; i < 4; i++ {
		if i == 1 {
			continue // reading pub.txt fails for want of the file
		}
		if !strings.Contains(results[i], "denied by policy: read private/") {
			t.Errorf("result %d: %q, want a read denial", i, results[i])
		}
	}
	for i := 4; i < 7; i++ {
		if strings.Contains(results[i], "denied") || strings.Contains(results[i], "failed") {
			t.Errorf("control result %d: %q, want success", i, results[i])
		}
	}
}
