package agent

import (
	"strings"
	"testing"

	"github.com/ioh-lsp/ioh-lsp/internal/agent/event"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/policy"
)

// The workspace's AGENTS.md and those of the directories between the
// root and the file the goal names reach the system prompt, shallower
// first; a directory without AGENTS.md contributes its CLAUDE.md; a
// directory the goal does not lead to contributes nothing (control).
func TestProjectInstructionsOnThePathOfTheGoal(t *testing.T) {
	f := newFixture(t, map[string]string{
		"AGENTS.md":         "root-rule: run make test\n",
		"pkg/CLAUDE.md":     "pkg-rule: no globals\n",
		"pkg/GEMINI.md":     "gemini-rule: not read beside CLAUDE.md\n",
		"pkg/sub/AGENTS.md": "sub-rule: table tests\n",
		"pkg/sub/CLAUDE.md": "claude-rule: not read beside AGENTS.md\n",
		"pkg/sub/x.go":      "package sub\n",
		"other/AGENTS.md":   "other-rule: unrelated\n",
	}, map[string][]turn{"": {say(10, "finish", args{"summary": "done"})}})
	f.run(t, goal("fix the bug in pkg/sub/x.go:3"))
	sys := f.prov.requests()[0].System
	root, pkg, sub := strings.Index(sys, "root-rule"), strings.Index(sys, "pkg-rule"), strings.Index(sys, "sub-rule")
	if root < 0 || pkg < root || sub < pkg {
		t.Errorf("instructions missing or out of order (root %d, pkg %d, sub %d):\n%s", root, pkg, sub, sys)
	}
	for _, no := range []string{"other-rule", "gemini-rule", "claude-rule"} {
		if strings.Contains(sys, no) {
			t.Errorf("the prompt holds %q:\n%s", no, sys)
		}
	}
	var named []string
	for _, e := range f.sink.ev {
		if rs, ok := e.Payload.(*event.RunStarted); ok && e.Parent == "" {
			for _, fi := range rs.Instructions {
				named = append(named, fi.Path)
			}
		}
	}
	if strings.Join(named, " ") != "AGENTS.md pkg/CLAUDE.md pkg/sub/AGENTS.md" {
		t.Errorf("run_started names instructions %v", named)
	}
}

// The instructions are capped at 32 KiB, cut at a line with a note that
// says how to read the rest; a file the read policy denies is named, not
// shown, while the root's is shown (control).
func TestProjectInstructionsCappedAndJudged(t *testing.T) {
	line := "a line of project instructions, forty-five b\n"
	long := strings.Repeat(line, 1000)
	f := newFixture(t, map[string]string{
		"AGENTS.md":        long,
		"secret/AGENTS.md": "denied-instructions\n",
		"secret/s.go":      "package secret\n",
	}, map[string][]turn{"": {say(10, "finish", args{"summary": "done"})}})
	c := goal("look at secret/s.go")
	c.Policy.Rules = []policy.Rule{{Act: policy.ActRead, Effect: policy.Deny, Pattern: "secret/**"}}
	f.run(t, c)
	sys := f.prov.requests()[0].System
	if !strings.Contains(sys, "[cut: the project instructions are capped at 32 KiB; read_file AGENTS.md for the rest]") {
		t.Errorf("no cut note")
	}
	if n := strings.Count(sys, "a line of project instructions"); n == 0 || n*len(line) > 32<<10 {
		t.Errorf("%d instruction lines shown, want some and at most 32 KiB", n)
	}
	if strings.Contains(sys, "denied-instructions") || !strings.Contains(sys, "## secret/AGENTS.md\n(not shown") {
		t.Errorf("the denied instructions are shown or not named")
	}
}
