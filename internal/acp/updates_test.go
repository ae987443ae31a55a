package acp

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/ioh-lsp/ioh-lsp/internal/agent"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/contract"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/event"
	"github.com/ioh-lsp/ioh-lsp/internal/workspace"
)

func testRoot(t *testing.T) *workspace.Root {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a.go"), []byte("package a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := workspace.NewRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// ev is an event of run r-1 with fields f, decoded from its JSON Lines
// form as a stored event is.
func ev(typ string, f map[string]any) event.Event {
	m := map[string]any{"run": "r-1", "step": 1, "type": typ, "time": time.Unix(0, 0).UTC().Format(time.RFC3339Nano)}
	for k, v := range f {
		m[k] = v
	}
	b, err := json.Marshal(m)
	if err != nil {
		panic(err)
	}
	var e event.Event
	if err := json.Unmarshal(b, &e); err != nil {
		panic(err)
	}
	return e
}

// encode renders updates as the JSON the client receives.
func encode(t *testing.T, us []any) []map[string]any {
	t.Helper()
	b, err := json.Marshal(us)
	if err != nil {
		t.Fatal(err)
	}
	var out []map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestToolCallsCarryKindLocationsAndDiffs(t *testing.T) {
	root := testRoot(t)
	abs := filepath.Join(root.Dir(), "a.go")
	tr := newTranslator(root, true)
	for _, tc := range []struct {
		tool, args, kind, title string
		content                 []map[string]any
	}{
		{"read_file", `{"path":"a.go"}`, "read", "Read a.go", nil},
		{"grep", `{"pattern":"func"}`, "search", "Search for func", nil},
		{"edit_file", `{"path":"a.go","old":"package a","new":"package b"}`, "edit", "Edit a.go",
			[]map[string]any{{"type": "diff", "path": abs, "oldText": "package a", "newText": "package b"}}},
		{"write_file", `{"path":"a.go","content":"package c\n"}`, "edit", "Write a.go",
			[]map[string]any{{"type": "diff", "path": abs, "oldText": "package a\n", "newText": "package c\n"}}},
		{"write_file", `{"path":"new.go","content":"x"}`, "edit", "Write new.go",
			[]map[string]any{{"type": "diff", "path": filepath.Join(root.Dir(), "new.go"), "newText": "x"}}},
		{"delete_file", `{"path":"a.go"}`, "delete", "Delete a.go", nil},
		{"rename_file", `{"from":"a.go","to":"b.go"}`, "move", "Rename a.go to b.go", nil},
		{"run", `{"argv":["go","test"]}`, "execute", "Run go test (sandboxed)", nil},
		{"docs__search", `{"q":"x"}`, "fetch", "docs__search", nil},
	} {
		got := encode(t, tr.event(ev(event.TypeToolCall, map[string]any{"tool": tc.tool, "id": "c1", "arguments": tc.args})))
		if len(got) != 1 {
			t.Fatalf("%s: %d updates", tc.tool, len(got))
		}
		u := got[0]
		if u["sessionUpdate"] != "tool_call" || u["toolCallId"] != "r-1/c1" || u["kind"] != tc.kind || u["title"] != tc.title || u["status"] != "in_progress" {
			t.Errorf("%s: %v", tc.tool, u)
		}
		var content []map[string]any
		if c, ok := u["content"].([]any); ok {
			for _, x := range c {
				content = append(content, x.(map[string]any))
			}
		}
		if !reflect.DeepEqual(content, tc.content) {
			t.Errorf("%s content:\n got %v\nwant %v", tc.tool, content, tc.content)
		}
	}
	// A path that leaves the workspace gets no location (nor any read).
	u := encode(t, tr.event(ev(event.TypeToolCall, map[string]any{"tool": "read_file", "id": "c2", "arguments": `{"path":"../../etc/passwd"}`})))[0]
	if u["locations"] != nil {
		t.Errorf("a path outside the workspace got a location: %v", u["locations"])
	}
	u = encode(t, tr.event(ev(event.TypeToolCall, map[string]any{"tool": "write_file", "id": "c3", "arguments": `{"path":"../outside","content":"x"}`})))[0]
	if d := u["content"].([]any)[0].(map[string]any); d["oldText"] != nil {
		t.Errorf("a file outside the workspace was read for the diff: %v", d)
	}
}

func TestResultsDenialsUsageAndOutcome(t *testing.T) {
	tr := newTranslator(testRoot(t), true)
	got := encode(t, tr.event(ev(event.TypeToolResult, map[string]any{"tool": "grep", "id": "c1", "is_error": true, "content": "bad regexp"})))
	if got[0]["sessionUpdate"] != "tool_call_update" || got[0]["status"] != "failed" || got[0]["toolCallId"] != "r-1/c1" {
		t.Errorf("failed result: %v", got)
	}
	got = encode(t, tr.event(ev(event.TypePolicy, map[string]any{"tool": "write_file", "act": "write", "target": ".git/config", "effect": "deny", "layer": "builtin", "rule": "deny write .git/**"})))
	if len(got) != 1 || got[0]["status"] != "failed" || got[0]["kind"] != "edit" || got[0]["title"] != "write_file denied by policy: write .git/config" {
		t.Errorf("denial: %v", got)
	}
	if got := tr.event(ev(event.TypePolicy, map[string]any{"effect": "allow"})); got != nil {
		t.Errorf("an allow verdict became %v", got)
	}
	got = encode(t, tr.event(ev(event.TypeBudget, map[string]any{"run_tokens": int64(900), "root_tokens": int64(1000), "root_cost_usd": 0.25, "root_cost_known": true,
		"steps": 2, "limit_tokens": int64(5000), "limit_steps": 10, "limit_cost_usd": 1.0})))
	want := map[string]any{"sessionUpdate": "usage_update", "used": 1000.0, "size": 5000.0, "cost": map[string]any{"amount": 0.25, "currency": "USD"},
		"_meta": map[string]any{"ioh": map[string]any{"steps": 2.0, "cost_known": true, "cache_read_tokens": 0.0, "limit_tokens": 5000.0, "limit_steps": 10.0, "limit_cost_usd": 1.0}}}
	if !reflect.DeepEqual(got[0], want) {
		t.Errorf("usage:\n got %v\nwant %v", got[0], want)
	}
	// An unknown cost is left out, never reported as $0.
	got = encode(t, tr.event(ev(event.TypeBudget, map[string]any{"root_tokens": int64(10), "root_cost_usd": 0.0, "root_cost_known": false})))
	if _, ok := got[0]["cost"]; ok {
		t.Errorf("unknown cost reported: %v", got[0])
	}
	got = encode(t, tr.event(ev(event.TypeOutcome, map[string]any{"outcome": "verification_failed", "error": "verification failed"})))
	if got[0]["sessionUpdate"] != "agent_message_chunk" || got[0]["content"].(map[string]any)["text"] != "Run r-1 ended: verification_failed (verification failed)\n" {
		t.Errorf("outcome: %v", got)
	}
}

func TestPlanFollowsTheChecks(t *testing.T) {
	tr := newTranslator(testRoot(t), true)
	c := &contract.Contract{Goal: "Fix it\nwith details", Verify: contract.Verify{Checks: []contract.Check{{Name: "unit", Run: []string{"go", "test", "./..."}}, {Name: "lint", Shell: "make lint"}}}}
	p := tr.startPlan(c)
	status := func(p planUpdate) []string {
		var s []string
		for _, e := range p.Entries {
			s = append(s, e.Status)
		}
		return s
	}
	if len(p.Entries) != 4 || p.Entries[0].Content != "Change the code: Fix it" || p.Entries[1].Content != "Verify in the sandbox: unit (go test ./...)" || p.Entries[2].Content != "Verify in the sandbox: lint (make lint)" {
		t.Fatalf("plan: %+v", p.Entries)
	}
	// The red phase (before the change) does not move the plan.
	if got := tr.event(ev(event.TypeVerification, map[string]any{"check": "unit", "phase": "red", "passed": false, "exit_code": 1, "backend": "linux"})); len(got) != 1 {
		t.Fatalf("red check: %v", got)
	}
	got := tr.event(ev(event.TypeVerification, map[string]any{"check": "unit", "phase": "green", "passed": true, "exit_code": 0, "backend": "linux", "evidence": "3 tests passed"}))
	if len(got) != 2 {
		t.Fatalf("green check: %v", got)
	}
	call := got[0].(toolCall)
	if call.Kind != kindExecute || call.Status != statusCompleted || call.ToolCallID != "r-1/check/unit/green" || call.Title != "Check unit passed (exit 0, linux sandbox)" {
		t.Errorf("check call: %+v", call)
	}
	if s := status(got[1].(planUpdate)); !reflect.DeepEqual(s, []string{"in_progress", "completed", "pending", "pending"}) {
		t.Errorf("plan after unit: %v", s)
	}
	got = tr.event(ev(event.TypeToolResult, map[string]any{"tool": "finish", "id": "f", "is_error": false, "content": "verified"}))
	if s := status(got[1].(planUpdate)); !reflect.DeepEqual(s, []string{"completed", "completed", "pending", "in_progress"}) {
		t.Errorf("plan after finish: %v", s)
	}
	got = tr.event(ev(event.TypeOutcome, map[string]any{"outcome": "applied"}))
	if s := status(got[0].(planUpdate)); !reflect.DeepEqual(s, []string{"completed", "completed", "completed", "completed"}) {
		t.Errorf("plan after applied: %v", s)
	}
}

// A stored event reads back as JSON (numbers as float64, lists as []any);
// it must become the same updates as the live one, so session/load shows
// what the editor saw live.
func TestStoredEventsTranslateAsLive(t *testing.T) {
	root := testRoot(t)
	events := []event.Event{
		ev(event.TypeModelTurn, map[string]any{"text": "Looking.", "input_tokens": int64(10)}),
		ev(event.TypeToolCall, map[string]any{"tool": "edit_file", "id": "c1", "arguments": `{"path":"a.go","old":"a","new":"b"}`}),
		ev(event.TypeToolResult, map[string]any{"tool": "edit_file", "id": "c1", "is_error": false, "content": "edited"}),
		ev(event.TypeBudget, map[string]any{"root_tokens": int64(70), "root_cost_usd": 0.5, "root_cost_known": true, "steps": 1}),
		ev(event.TypeVerification, map[string]any{"check": "unit", "phase": "green", "passed": false, "exit_code": 2, "backend": "landlock", "problems": []string{"TestX failed"}}),
		ev(event.TypeOutcome, map[string]any{"outcome": "verification_failed", "summary": "tried"}),
	}
	live, stored := newTranslator(root, false), newTranslator(root, false)
	for _, e := range events {
		b, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		var back event.Event
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatal(err)
		}
		l, s := encode(t, live.event(e)), encode(t, stored.event(back))
		if !reflect.DeepEqual(l, s) {
			t.Errorf("%s:\n live %v\nstored %v", e.Type, l, s)
		}
	}
}

func TestPermissionToolCallIsReusedByTheCall(t *testing.T) {
	tr := newTranslator(testRoot(t), true)
	tr.expectCall("r-1", "run", "r-1/ask-1")
	u := tr.event(ev(event.TypeToolCall, map[string]any{"tool": "run", "id": "c9", "arguments": `{"argv":["ls"]}`}))[0].(toolCall)
	if u.ToolCallID != "r-1/ask-1" || u.SessionUpdate != "tool_call_update" {
		t.Fatalf("the allowed call should update the permission's entry: %+v", u)
	}
	r := tr.event(ev(event.TypeToolResult, map[string]any{"tool": "run", "id": "c9", "content": "ok"}))[0].(toolCall)
	if r.ToolCallID != "r-1/ask-1" || r.Status != statusCompleted {
		t.Fatalf("its result: %+v", r)
	}
	// The next call of the same tool is a new entry.
	if u := tr.event(ev(event.TypeToolCall, map[string]any{"tool": "run", "id": "c10", "arguments": `{}`}))[0].(toolCall); u.ToolCallID != "r-1/c10" {
		t.Fatalf("a later call: %+v", u)
	}
}

func TestStopReasons(t *testing.T) {
	for _, tc := range []struct {
		o         agent.Outcome
		err       error
		cancelled bool
		want      string
	}{
		{agent.OutcomeApplied, nil, false, stopEndTurn},
		{agent.OutcomeRejected, nil, false, stopEndTurn},
		{agent.OutcomeVerificationFailed, nil, false, stopEndTurn},
		{agent.OutcomeCancelled, nil, false, stopCancelled},
		{agent.OutcomeApplied, nil, true, stopCancelled},
		{agent.OutcomeBudgetExceeded, errors.New("token budget: the next call needs about 10 input tokens, 5 are left"), false, stopMaxTokens},
		{agent.OutcomeBudgetExceeded, errors.New("step budget of 3 spent"), false, stopMaxTurns},
		{agent.OutcomeDenied, nil, false, stopRefusal},
	} {
		if got := stopReason(&agent.Result{Outcome: tc.o, Err: tc.err}, tc.cancelled); got != tc.want {
			t.Errorf("%s (cancelled %v): %s, want %s", tc.o, tc.cancelled, got, tc.want)
		}
	}
}

// TestFollowUpReplaysAsTheUsersMessage: a stored user_turn replays as
// the user's message; live, the client shows what the user typed, and a
// sub-agent's turn is never the user's.
func TestFollowUpReplaysAsTheUsersMessage(t *testing.T) {
	turn := event.New("r-1", "", 3, &event.UserTurn{Text: "now also tabs", Change: event.TurnPending})
	got := newTranslator(testRoot(t), false).event(turn)
	if len(got) != 1 || got[0].(chunkUpdate).SessionUpdate != "user_message_chunk" || got[0].(chunkUpdate).Content.Text != "now also tabs" {
		t.Errorf("replayed user_turn: %+v", got)
	}
	if got := newTranslator(testRoot(t), true).event(turn); len(got) != 0 {
		t.Errorf("live user_turn: %+v", got)
	}
	if !followsAnother([]event.Event{event.New("r-2", "", 0, &event.UserTurn{Text: "x", Follows: "r-1"})}) ||
		followsAnother([]event.Event{turn}) {
		t.Error("followsAnother: a linked run's turn names the run it follows; a continued run's does not")
	}
}
