package agent

import (
	"strings"
	"testing"

	"github.com/ioh-lsp/ioh-lsp/internal/agent/policy"
)

// A contract's context files reach the system prompt only when the read
// policy lets the model read them: a task file cannot put .env (the
// built-in layer asks before reading it) or a file a rule denies
// into the prompt by listing it, while an ordinary file matched by the
// same glob is shown (control). The prompt names the withheld ones so the
// model can read_file them and be asked.
func TestContextFilesFollowReadPolicy(t *testing.T) {
	f := newFixture(t, map[string]string{
		".env":          "API_TOKEN=v4lue-in-env\n",
		"notes.txt":     "ordinary-note-text\n",
		"private/k.txt": "denied-by-user-rule\n",
	}, map[string][]turn{"": {say(10, "finish", args{"summary": "done"})}})
	c := goal("look")
	c.Policy.Rules = []policy.Rule{{Act: policy.ActRead, Effect: policy.Deny, Pattern: "private/**"}}
	c.Context = []string{"**"}
	res := f.run(t, c)
	if res.Outcome != OutcomeApplied && res.Outcome != OutcomeUnverified {
		t.Fatalf("outcome %s (%v)", res.Outcome, res.Err)
	}
	sys := f.prov.requests()[0].System
	if !strings.Contains(sys, "ordinary-note-text") {
		t.Errorf("control: the ordinary context file is missing from the prompt:\n%s", sys)
	}
	for _, leak := range []string{"v4lue-in-env", "denied-by-user-rule"} {
		if strings.Contains(sys, leak) {
			t.Errorf("the prompt holds %q from a file the read policy guards:\n%s", leak, sys)
		}
	}
	if !strings.Contains(sys, "## .env\n(not shown") {
		t.Errorf("the prompt does not say .env was withheld:\n%s", sys)
	}
}
