package lsp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"sync"
	"testing"

	"go.lsp.dev/protocol"

	"github.com/ioh-lsp/ioh-lsp/internal/lsp/lsptest"
)

// budgetCassette: three edits and a finish, each turn charged $0.01 by
// its provider when it was recorded.
const budgetCassette = `{"version": 1, "turns": [
 {"text": "first", "tool_calls": [{"name": "edit_file", "arguments": {"path": "a.txt", "old": "a", "new": "a1"}}], "usage": {"input_tokens": 100, "output_tokens": 10}, "cost_usd": 0.01},
 {"text": "second", "tool_calls": [{"name": "edit_file", "arguments": {"path": "a.txt", "old": "a1", "new": "a12"}}], "usage": {"input_tokens": 100, "output_tokens": 10}, "cost_usd": 0.01},
 {"text": "third", "tool_calls": [{"name": "edit_file", "arguments": {"path": "a.txt", "old": "a12", "new": "a123"}}], "usage": {"input_tokens": 100, "output_tokens": 10}, "cost_usd": 0.01},
 {"text": "done", "tool_calls": [{"name": "finish", "arguments": {"summary": "edited"}}], "usage": {"input_tokens": 100, "output_tokens": 10}, "cost_usd": 0.01}
]}`

const budgetTask = `version: 1
goal: "edit a.txt three times"
budget:
  steps: 2
model: {provider: replay, cassette: cassette.json}
`

// progressEnds counts the ends of token's progress.
func progressEnds(s lsptest.State, token string) int {
	n := 0
	for _, p := range s.Progress[token] {
		if p.Kind == "end" {
			n++
		}
	}
	return n
}

// A run stopped by its step budget: progress shows the running total of
// two $0.01 calls as $0.0200 against the limits, the task file gets a
// budget-exceeded warning with a "Continue with a larger budget" quick fix
// and lens; a lower budget is refused; the quick fix asks how much more
// (showMessageRequest), and the run continues from its last step to the
// end, each call charged once, ioh.runs showing the spend against the
// raised limit.
func TestContinueWithLargerBudget(t *testing.T) {
	var mu sync.Mutex
	var asked []protocol.ShowMessageRequestParams
	choice := "Not now" // the first ask is declined
	f := newFixture(t, map[string]string{"a.txt": "a\n", "cassette.json": budgetCassette, "task.ioh.yaml": budgetTask},
		lsptest.Config{Hooks: lsptest.Hooks{ShowMessageRequest: func(ctx context.Context, p *protocol.ShowMessageRequestParams) (*protocol.MessageActionItem, error) {
			mu.Lock()
			asked = append(asked, *p)
			want := choice
			mu.Unlock()
			for _, a := range p.Actions {
				if strings.HasPrefix(a.Title, want) {
					return &a, nil
				}
			}
			if len(p.Actions) > 0 {
				return &p.Actions[0], nil // approvals: apply
			}
			return nil, nil
		}}})
	ctx := f.ctx()
	task := f.editor.URI("task.ioh.yaml")
	id := f.start(ctx, "ioh.run", map[string]string{"contract": string(task)})
	token := "ioh/" + id
	msg := f.awaitEnd(ctx, id)
	if !strings.Contains(msg, "budget_exceeded") {
		t.Fatalf("end: %q, want budget_exceeded", msg)
	}
	t.Logf("progress end: %s", msg)

	// Progress: the running total, not the last call's cost.
	var last string
	for _, p := range f.editor.Snapshot().Progress[token] {
		if p.Kind == "report" {
			last = p.Message
		}
	}
	t.Logf("last progress report: %s", last)
	if !strings.Contains(last, "step 2/2") || !strings.Contains(last, "$0.0200") {
		t.Errorf("last progress report %q: want step 2/2 and the running total $0.0200", last)
	}

	var diag protocol.Diagnostic
	if _, err := f.editor.Await(ctx, "budget-exceeded warning on the task file", func(s lsptest.State) bool {
		for _, d := range s.Diagnostics[task] {
			if d.Code != nil && fmt.Sprint(d.Code) == "budget-exceeded" {
				diag = d
				return true
			}
		}
		return false
	}); err != nil {
		t.Fatal(err)
	}
	if diag.Severity != protocol.DiagnosticSeverityWarning || diag.Range.Start.Line != 2 || !strings.Contains(fmt.Sprint(diag.Message), "step budget") {
		t.Errorf("diagnostic %+v: want a warning on the budget line naming the step budget", diag)
	}
	t.Logf("diagnostic %s at line %d: %v", fmt.Sprint(diag.Code), diag.Range.Start.Line+1, diag.Message)
	lenses, err := f.editor.CodeLenses(ctx, "task.ioh.yaml")
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, l := range lenses {
		if strings.Contains(l.Command.Title, "Continue with a larger budget ("+id+")") && l.Command.Command == "ioh.resume" {
			found = true
		}
	}
	if !found {
		t.Errorf("no continue lens among %+v", lenses)
	}

	if _, err := f.editor.ExecuteCommand(ctx, "ioh.resume", map[string]any{"runId": id, "budget": map[string]any{"steps": 1}}); err == nil || !strings.Contains(err.Error(), "only raise") {
		t.Errorf("a lower budget: %v, want a refusal", err)
	}

	// Declining the question leaves the run as it was.
	raw, err := f.editor.ExecuteCommand(ctx, "ioh.resume", map[string]any{"runId": id})
	if err != nil || !strings.Contains(string(raw), `"resumed":false`) {
		t.Fatalf("declined resume: %s, %v", raw, err)
	}
	if info := f.runsByID(ctx)[id]; info.Outcome != "budget_exceeded" || info.Steps != 2 {
		t.Fatalf("after declining: %+v", info)
	}
	mu.Lock()
	choice = "×2"
	mu.Unlock()

	actions, err := f.editor.CodeActions(ctx, "task.ioh.yaml", diag.Range, []protocol.Diagnostic{diag})
	if err != nil {
		t.Fatal(err)
	}
	ca, ok := lsptest.FindAction(actions, "Continue with a larger budget")
	if !ok {
		t.Fatalf("no quick fix among %d actions", len(actions))
	}
	if _, err := f.editor.ApplyCodeAction(ctx, ca); err != nil {
		t.Fatal(err)
	}
	if _, err := f.editor.Await(ctx, "the resumed run's end", func(s lsptest.State) bool { return progressEnds(s, token) >= 2 }); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	q := asked[len(asked)-1]
	mu.Unlock()
	var titles []string
	for _, a := range q.Actions {
		titles = append(titles, a.Title)
	}
	t.Logf("asked: %s [%s]", q.Message, strings.Join(titles, " | "))
	for _, p := range f.editor.Snapshot().Progress[token] {
		if p.Kind == "end" {
			t.Logf("progress end: %s", p.Message)
		}
	}
	if !strings.Contains(q.Message, "step budget") || len(q.Actions) != 3 || q.Actions[1].Title != "×2: 4 steps" || q.Actions[2].Title != "Not now" {
		t.Errorf("asked %q with %+v", q.Message, q.Actions)
	}
	info := f.runsByID(ctx)[id]
	if info.Outcome == "budget_exceeded" || info.Outcome == "running" || info.Steps != 4 {
		t.Errorf("resumed run: %+v, want it finished after 4 steps", info)
	}
	if info.CostUSD == nil || math.Abs(*info.CostUSD-0.04) > 1e-9 {
		t.Errorf("ioh.runs costUsd %v, want 4 calls of $0.01 charged once each", info.CostUSD)
	}
	if info.Limits == nil || info.Limits.Steps != 4 {
		t.Errorf("ioh.runs limits %+v, want steps raised to 4", info.Limits)
	}
	if got := f.read("a.txt"); got != "a123\n" && got != "a\n" {
		t.Errorf("a.txt = %q: an edit ran twice", got)
	}
	for _, d := range f.editor.Snapshot().Diagnostics[task] {
		if fmt.Sprint(d.Code) == "budget-exceeded" {
			t.Error("the budget warning outlived the resume")
		}
	}
	raw, _ = json.Marshal(info)
	t.Logf("ioh.runs: %s", raw)
	if !strings.Contains(string(raw), `"limits":{"steps":4,`) || !strings.Contains(string(raw), `"costUsd":0.04`) {
		t.Errorf("ioh.runs entry %s", raw)
	}
}
