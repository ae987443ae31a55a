package agent

import (
	"strings"
	"testing"
)

// grep through a run judges every file it returns by the run's policy:
// .env (the built-in layer asks before reading it) is withheld from the
// first search, without a word, while an ordinary file holding the same
// value is shown (control); once the user allows reading .env for the
// run (answering a read_file of it), the same search shows it.
func TestRunGrepFollowsReadPolicy(t *testing.T) {
	f := newFixture(t, map[string]string{".env": "API_TOKEN=v4lue-123\n", "src/conf.txt": "token=v4lue-123\n"}, map[string][]turn{"": {
		say(10, "grep", args{"pattern": "v4lue"}),
		say(10, "read_file", args{"path": ".env"}),
		say(10, "grep", args{"pattern": "v4lue"}),
		say(10, "finish", args{"summary": "done"}),
	}})
	f.appr.act = Decision{Answer: AllowRun}
	res := f.run(t, goal("look"))
	if res.Outcome != OutcomeApplied && res.Outcome != OutcomeUnverified {
		t.Fatalf("outcome %s (%v)", res.Outcome, res.Err)
	}
	reqs := f.prov.requests()
	first := reqs[1].Messages[2].ToolResults[0].Content
	if strings.Contains(first, "API_TOKEN") || !strings.Contains(first, "src/conf.txt:1:token=v4lue-123") || strings.Contains(first, ".env") {
		t.Errorf("first grep:\n%s\nwant .env withheld (not named: that it matches is what it holds), src/conf.txt shown", first)
	}
	if len(f.appr.acts) != 1 || f.appr.acts[0].Verdict.Target != ".env" {
		t.Errorf("approver asked %d times (%+v), want once, for read_file .env", len(f.appr.acts), f.appr.acts)
	}
	second := reqs[3].Messages[6].ToolResults[0].Content
	if !strings.Contains(second, ".env:1:API_TOKEN=v4lue-123") {
		t.Errorf("second grep after allowing .env for the run:\n%s", second)
	}
}
