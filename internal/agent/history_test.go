package agent

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/ioh-lsp/ioh-lsp/internal/agent/contract"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/event"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/trace"
)

// A run its budget stopped, read back by another process (a history
// opened on the same store file, as `ioh-lsp runs` or a restarted server
// does), names the limit that stopped it from what the run recorded, not
// from its error text: with the text rewritten it still says steps; a
// run that did not end budget_exceeded names none whatever its text
// says; a run stored before the limit was recorded falls back to its
// text.
func TestStoredRunCarriesStopLimit(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, budgetFiles, budgetTurns())
	stateDir := t.TempDir()
	s, err := trace.Open(ctx, trace.DBPath(stateDir, f.dir), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	f.store = s
	f.h = f.harness(t)
	c := goal("edit both")
	c.Budget = contract.Budget{Steps: 2}
	res := f.run(t, c)
	if res.Outcome != OutcomeBudgetExceeded || res.StopLimit() != LimitSteps {
		t.Fatalf("run: %s (%v), want budget_exceeded on steps", res.Outcome, res.Err)
	}

	hs, err := OpenHistory(ctx, stateDir, f.dir)
	if err != nil {
		t.Fatal(err)
	}
	defer hs.Close()
	read := func() *StoredRun {
		t.Helper()
		r, err := hs.Run(ctx, res.RunID)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	if r := read(); r.StopLimit() != LimitSteps || r.Spend.Limits.Steps != 2 || r.Spend.Steps != 2 {
		t.Fatalf("stored run: limit %q, spend %+v; want steps, 2 of 2", r.StopLimit(), r.Spend)
	}
	var be *BudgetError
	if r := read(); !errors.As(r.Err, &be) || be.Limit != LimitSteps {
		t.Errorf("stored run's error %T %v: want a *BudgetError on steps", r.Err, r.Err)
	}
	evs, err := hs.Events(ctx, res.RunID)
	if err != nil {
		t.Fatal(err)
	}
	if p, ok := evs[len(evs)-1].Payload.(*event.Outcome); !ok || p.Limit != string(LimitSteps) {
		t.Errorf("last stored event %+v: want an outcome event with limit steps", evs[len(evs)-1].Payload)
	}

	row, err := s.Run(ctx, res.RunID)
	if err != nil {
		t.Fatal(err)
	}
	setOutcome := func(outcome Outcome, text string, state json.RawMessage) {
		t.Helper()
		if err := s.SetOutcome(ctx, res.RunID, string(outcome), row.Summary, text, state); err != nil {
			t.Fatal(err)
		}
	}
	setOutcome(OutcomeBudgetExceeded, "it ran out of room", row.State)
	r := read()
	if r.StopLimit() != LimitSteps {
		t.Errorf("error text rewritten: limit %q, want steps (the recorded one)", r.StopLimit())
	}
	if ch := RaiseChoices(r.Spend, r.StopLimit()); len(ch) != 2 || ch[0].Raise != (contract.Budget{Steps: 3}) || ch[1].Raise != (contract.Budget{Steps: 4}) {
		t.Errorf("raise choices %+v, want +50%% and ×2 of the 2 steps", ch)
	}

	setOutcome(OutcomeProviderFailed, "the token budget endpoint failed", row.State)
	if r := read(); r.StopLimit() != "" {
		t.Errorf("provider_failed whose text names a budget: limit %q, want none", r.StopLimit())
	}

	var st map[string]any
	if err := json.Unmarshal(row.State, &st); err != nil {
		t.Fatal(err)
	}
	delete(st, "stop_limit")
	old, _ := json.Marshal(st)
	setOutcome(OutcomeBudgetExceeded, "token budget of 100 spent", old)
	if r := read(); r.StopLimit() != LimitTokens {
		t.Errorf("a run stored before its limit was recorded: limit %q, want tokens (from its text)", r.StopLimit())
	}
	runs, err := hs.Runs(ctx)
	if err != nil || len(runs) != 1 || runs[0].StopLimit() != LimitTokens || runs[0].Spend.Steps != 2 {
		t.Errorf("Runs: %v, %+v", err, runs)
	}
}
