package agent

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/event"
)

// Each tool_result records the workspace files its call changed, as the
// change set names them: a write tool's file (however the model spelled
// it), both names of a rename, every file of a patch, and for
// spawn_agent only what the sub-agent itself changed (not the parent's
// earlier edits it started from). Reads and failed calls record none.
func TestToolResultsRecordWhatTheyWrote(t *testing.T) {
	patch := "--- a/b.txt\n+++ b/b.txt\n@@ -1 +1 @@\n-b\n+b1\n--- a/d.txt\n+++ b/d.txt\n@@ -1 +1 @@\n-d\n+d1\n"
	f := newFixture(t, map[string]string{"a.txt": "a\n", "b.txt": "b\n", "c.txt": "c\n", "d.txt": "d\n", "sub/e.txt": "e\n"}, map[string][]turn{
		"": {
			say(10, "edit_file", args{"path": "./a.txt", "old": "a", "new": "a1"}, "write_file", args{"path": "new.txt", "content": "n\n"},
				"read_file", args{"path": "b.txt"}, "edit_file", args{"path": "c.txt", "old": "zzz", "new": "y"}),
			say(10, "apply_patch", args{"patch": patch}),
			say(10, "rename_file", args{"from": "c.txt", "to": "c2.txt"}, "delete_file", args{"path": "sub/e.txt"}),
			say(10, "spawn_agent", args{"goal": "child"}),
			say(10, "finish", args{"summary": "s"}),
		},
		"child": {
			say(10, "edit_file", args{"path": "b.txt", "old": "b1", "new": "b2"}, "write_file", args{"path": "f.txt", "content": "f\n"}),
			say(10, "finish", args{"summary": "c"}),
		},
	})
	res := f.run(t, goal("write things"))
	if res.Outcome != OutcomeApplied {
		t.Fatalf("outcome %s (%v)", res.Outcome, res.Err)
	}
	got := map[string][]string{}
	for _, e := range storedEvents(t, f, res.RunID, event.TypeToolResult) {
		r := e.Payload.(*event.ToolResult)
		who := "root"
		if e.Run != res.RunID {
			who = "child"
		}
		key := fmt.Sprintf("%s %d %s", who, e.Step, r.Tool)
		if r.IsError {
			key += " (error)"
		}
		got[key] = append(got[key], strings.Join(r.Wrote, ","))
	}
	want := map[string][]string{
		"root 1 edit_file":         {"a.txt"},
		"root 1 write_file":        {"new.txt"},
		"root 1 read_file":         {""},
		"root 1 edit_file (error)": {""},
		"root 2 apply_patch":       {"b.txt,d.txt"},
		"root 3 rename_file":       {"c.txt,c2.txt"},
		"root 3 delete_file":       {"sub/e.txt"},
		"root 4 spawn_agent":       {"b.txt,f.txt"},
		"root 5 finish":            {""},
		"child 1 edit_file":        {"b.txt"},
		"child 1 write_file":       {"f.txt"},
		"child 2 finish":           {""},
	}
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("wrote per call (-got +want):\n%s", diff)
	}
	if b := f.read(t, "b.txt"); b != "b2\n" {
		t.Errorf("b.txt = %q", b)
	}
}
