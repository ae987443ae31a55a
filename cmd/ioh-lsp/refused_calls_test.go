package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestRefusedCallsAreTraced: calls that never run (arguments of the wrong
// type, a tool that does not exist, a path outside the workspace, an act
// the policy denies) are in the trace as a tool_call with its error
// tool_result, as the model got it; the call that runs is recorded the
// same way (control).
func TestRefusedCallsAreTraced(t *testing.T) {
	cas := `{"version":1,"turns":[
 {"tool_calls":[{"name":"read_file","arguments":{"path":5}}]},
 {"tool_calls":[{"name":"no_such_tool","arguments":{}}]},
 {"tool_calls":[{"name":"write_file","arguments":{"path":"../outside.txt","content":"x"}}]},
 {"tool_calls":[{"name":"write_file","arguments":{"path":"blocked.txt","content":"x"}}]},
 {"tool_calls":[{"name":"write_file","arguments":{"path":"ok.txt","content":"x"}}]},
 {"tool_calls":[{"name":"finish","arguments":{"summary":"x"}}]}]}`
	task := "version: 1\ngoal: bad calls\nbudget: {cost_usd: 0}\npolicy:\n  rules:\n    - {act: write, pattern: blocked.txt, effect: deny}\n"
	w := newBudgetWorld(t, map[string]string{"cas.json": cas, "t.ioh.yaml": task})
	code, _, errOut := w.cli("run", "t.ioh.yaml", "--approve", "never", "--cassette", "cas.json")
	if code != exitOK {
		t.Fatalf("exit %d\n%s", code, errOut)
	}
	_, tr, _ := w.cli("trace", runID(t, errOut), "--json")
	type call struct {
		step         int
		tool, result string
	}
	calls := map[string]*call{}
	var order []string
	for _, l := range strings.Split(strings.TrimSpace(tr), "\n") {
		var e struct {
			Type, Tool, ID, Content string
			Step                    int
			IsError                 bool `json:"is_error"`
		}
		if json.Unmarshal([]byte(l), &e) != nil {
			t.Fatalf("trace line %q", l)
		}
		switch e.Type {
		case "tool_call":
			calls[e.ID] = &call{step: e.Step, tool: e.Tool}
			order = append(order, e.ID)
		case "tool_result":
			if c := calls[e.ID]; c != nil {
				c.result = map[bool]string{true: "error: ", false: "ok: "}[e.IsError] + e.Content
			}
		}
	}
	want := []struct{ tool, result string }{
		{"read_file", "error: read_file: "},
		{"no_such_tool", `error: unknown tool "no_such_tool"`},
		{"write_file", "error: "},
		{"write_file", "error: denied by policy: write blocked.txt"},
		{"write_file", "ok: "},
		{"finish", ""},
	}
	if len(order) != len(want) {
		t.Fatalf("%d tool calls in the trace, want %d:\n%s", len(order), len(want), tr)
	}
	for i, id := range order {
		c := calls[id]
		if c.step != i+1 || c.tool != want[i].tool || !strings.HasPrefix(c.result, want[i].result) {
			t.Errorf("call %d: step %d %s %q; want step %d %s %q…", i, c.step, c.tool, c.result, i+1, want[i].tool, want[i].result)
		}
	}
}
