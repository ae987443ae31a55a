package acp

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/ioh-lsp/ioh-lsp/internal/agent"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/event"
)

// The panel acts on the stop reason the run recorded, never on its error
// text: a run its step budget stopped, its stored error text rewritten,
// is offered the steps that stopped it again on /resume (its meta naming
// the limit), and the outcome message names the flag of the event's
// limit; an outcome that is not a budget stop gets no budget advice
// whatever its text says.
func TestBudgetStopIsTypedNotText(t *testing.T) {
	ws := t.TempDir()
	task := filepath.Join(ws, "edit.ioh.yaml")
	cassette := filepath.Join(t.TempDir(), "cassette.json")
	var turns []string
	for i := range 3 {
		turns = append(turns, fmt.Sprintf(`{"tool_calls":[{"name":"edit_file","arguments":{"path":"a.txt","old":"a%d","new":"a%d"}}],"usage":{"input_tokens":100,"output_tokens":10}}`, i, i+1))
	}
	writeFiles(t, map[string]string{
		filepath.Join(ws, "a.txt"): "a0\n",
		task:                       "version: 1\ngoal: edit a.txt\nbudget:\n  steps: 2\n",
		cassette:                   `{"version":1,"turns":[` + strings.Join(turns, ",") + `]}`,
	})
	var mu sync.Mutex
	var offers [][]string
	var limits []any
	c := newClient(t, cassette, func(p map[string]any) any {
		tc := p["toolCall"].(map[string]any)
		if !strings.Contains(fmt.Sprint(tc["title"]), "Continue with a larger budget?") {
			return selected(optAllowOnce)
		}
		var names []string
		for _, o := range p["options"].([]any) {
			names = append(names, fmt.Sprint(o.(map[string]any)["name"]))
		}
		mu.Lock()
		offers = append(offers, names)
		limits = append(limits, tc["_meta"].(map[string]any)["ioh"].(map[string]any)["limit"])
		mu.Unlock()
		return selected(optRejectOnce)
	})
	sid := openSession(t, c, ws)
	if r := result(t, c.call(methodSessionPrompt, taskPrompt(sid, task))); r["stopReason"] != stopMaxTurns {
		t.Fatalf("stop reason %v, want %s (the step budget)", r["stopReason"], stopMaxTurns)
	}
	ctx := context.Background()
	c.mu.Lock()
	store := c.store
	c.mu.Unlock()
	rows, err := store.Runs(ctx)
	if err != nil || len(rows) != 1 || rows[0].Outcome != string(agent.OutcomeBudgetExceeded) {
		t.Fatalf("stored runs %v, %+v: want one stopped by its budget", err, rows)
	}
	id := rows[0].ID
	if err := store.SetOutcome(ctx, id, rows[0].Outcome, rows[0].Summary, "it ran out of room", rows[0].State); err != nil {
		t.Fatal(err)
	}
	c.call(methodSessionPrompt, map[string]any{"sessionId": sid, "prompt": []any{map[string]any{"type": "text", "text": "/resume " + id}}})
	mu.Lock()
	want := "Continue with +50%: 3 steps|Continue with ×2: 4 steps|Stop here"
	if len(offers) != 2 || strings.Join(offers[1], "|") != want || limits[1] != string(agent.LimitSteps) {
		t.Errorf("offers %q (limits %v); want the second, after the text was rewritten, %q on steps", offers, limits, want)
	}
	mu.Unlock()

	tr := newTranslator(testRoot(t), false)
	say := func(p *event.Outcome) string {
		var b strings.Builder
		for _, u := range tr.event(event.New("r-1", "", 2, p)) {
			if ch, ok := u.(chunkUpdate); ok {
				b.WriteString(ch.Content.Text)
			}
		}
		return b.String()
	}
	if got := say(&event.Outcome{Outcome: string(agent.OutcomeBudgetExceeded), Error: "it ran out of room", Limit: string(agent.LimitWall)}); !strings.Contains(got, "`ioh-lsp resume r-1 --budget-wall D`") {
		t.Errorf("a wall stop whose text names no limit: %q, want the --budget-wall flag", got)
	}
	if got := say(&event.Outcome{Outcome: string(agent.OutcomeProviderFailed), Error: "the provider's step budget ran out"}); strings.Contains(got, "--budget") || strings.Contains(got, "larger budget") {
		t.Errorf("provider_failed whose text names a budget: %q, want no budget advice", got)
	}
}
