package agent

import (
	"testing"
)

// "Allow for this run" remembers exactly the act the user saw. A target
// whose name holds glob characters (a file literally named .env[.]local)
// must not become a pattern that also allows reading .env.local, which
// the user was never asked about; the same act again is not asked
// (control: the answer is remembered).
func TestAllowRunRemembersExactlyTheAct(t *testing.T) {
	f := newFixture(t, map[string]string{".env.local": "API_TOKEN=v4lue-123\n", ".env[.]local": "decoy\n"}, map[string][]turn{"": {
		say(10, "read_file", args{"path": ".env[.]local"}),
		say(10, "read_file", args{"path": ".env[.]local"}),
		say(10, "read_file", args{"path": ".env.local"}),
		say(10, "finish", args{"summary": "done"}),
	}})
	f.appr.act = Decision{Answer: AllowRun}
	res := f.run(t, goal("look"))
	if res.Outcome != OutcomeApplied && res.Outcome != OutcomeUnverified {
		t.Fatalf("outcome %s (%v)", res.Outcome, res.Err)
	}
	var asked []string
	for _, r := range f.appr.acts {
		asked = append(asked, r.Verdict.Target)
	}
	if len(asked) != 2 || asked[0] != ".env[.]local" || asked[1] != ".env.local" {
		t.Errorf("approver asked about %q, want [.env[.]local .env.local] (the remembered answer covers only the act it answered)", asked)
	}
}
