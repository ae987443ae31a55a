package agent

import (
	"strings"
	"testing"

	"github.com/ioh-lsp/ioh-lsp/internal/agent/event"
)

// An explore sub-agent gets only reading tools, run and finish, the
// project instructions and context files, a quarter of the parent's
// steps, and its findings come back as the spawn result; an edit child
// (control) keeps the writing tools.
func TestExploreSubAgent(t *testing.T) {
	const child = "find the counter"
	const editor = "bump the counter"
	f := newFixture(t, map[string]string{
		"AGENTS.md": "root-instructions-text\n",
		"notes.txt": "context-file-text\n",
		"a.txt":     "counter = 1\n",
	}, map[string][]turn{
		"": {
			say(10, "spawn_agent", args{"goal": child, "mode": "explore"}),
			say(10, "spawn_agent", args{"goal": editor}),
			say(10, "finish", args{"summary": "done"}),
		},
		child: {
			say(10, "write_file", args{"path": "a.txt", "content": "x"}),
			say(10, "finish", args{"summary": "the counter is at a.txt:1"}),
		},
		editor: {say(10, "finish", args{"summary": "nothing"})},
	})
	c := goal("count")
	c.Budget.Steps = 40
	c.Context = []string{"notes.txt"}
	f.run(t, c)
	var childReq, editReq, parentLast = -1, -1, -1
	reqs := f.prov.requests()
	for i, r := range reqs {
		switch r.Agent {
		case child:
			if childReq < 0 {
				childReq = i
			}
		case editor:
			editReq = i
		case "":
			parentLast = i
		}
	}
	if childReq < 0 || editReq < 0 {
		t.Fatalf("no child requests")
	}
	names := func(i int) string {
		var n []string
		for _, s := range reqs[i].Tools {
			n = append(n, s.Name)
		}
		return strings.Join(n, " ")
	}
	if got := names(childReq); got != "find finish grep list_dir read_file run" {
		t.Errorf("explore tools: %s", got)
	}
	if got := names(editReq); !strings.Contains(got, "write_file") || !strings.Contains(got, "edit_file") {
		t.Errorf("control: the edit child lacks writing tools: %s", got)
	}
	sys := reqs[childReq].System
	for _, want := range []string{"root-instructions-text", "context-file-text", "# Explore mode"} {
		if !strings.Contains(sys, want) {
			t.Errorf("the explore child's prompt lacks %q", want)
		}
	}
	var spawned []*event.AgentSpawned
	for _, e := range f.sink.ev {
		if s, ok := e.Payload.(*event.AgentSpawned); ok {
			spawned = append(spawned, s)
		}
	}
	if len(spawned) != 2 || spawned[0].Steps != 10 {
		t.Errorf("spawned %+v, want the explore child with 10 steps (a quarter of 40)", spawned)
	}
	var result string
	for _, m := range reqs[parentLast].Messages {
		for _, r := range m.ToolResults {
			if strings.Contains(r.Content, child) {
				result = r.Content
				if r.IsError {
					t.Errorf("the explore result is an error: %s", r.Content)
				}
			}
		}
	}
	if !strings.Contains(result, "findings: the counter is at a.txt:1") {
		t.Errorf("spawn result %q lacks the findings", result)
	}
	if f.read(t, "a.txt") != "counter = 1\n" {
		t.Errorf("the explore child wrote a.txt")
	}
}
