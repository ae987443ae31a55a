package agent

import (
	"context"
	"errors"
	"math"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ioh-lsp/ioh-lsp/internal/agent/contract"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/event"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/model"
)

// pricedHarness is f's harness with its own pricing and model resolver
// (nil keeps the contract's model) and a small output cap, so that budget
// estimates stay close to what the scripted calls use.
func (f *fixture) pricedHarness(t *testing.T, cost CostFunc, resolve func(contract.Model) contract.Model, prov ...model.Provider) *Harness {
	t.Helper()
	var p model.Provider = f.prov
	if len(prov) > 0 {
		p = prov[0]
	}
	h, err := New(Options{
		Root: f.root, Store: f.store, Approver: f.appr, Events: f.sink, Sandbox: copySandbox{t},
		Providers: func(*contract.Contract, RetryReporter) (model.Provider, error) { return p, nil },
		Cost:      cost, Model: resolve, MaxTokens: 200,
	})
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// tablePrice prices every model at $1 per million input and $5 per
// million output tokens, from the table.
func tablePrice(_, _ string, u model.Usage) (float64, model.CostSource) {
	return float64(u.InputTokens)*1e-6 + float64(u.OutputTokens)*5e-6, model.CostTable
}

func storedEvents(t *testing.T, f *fixture, id, typ string) []event.Event {
	t.Helper()
	evs, err := f.store.TreeEvents(testCtx(t), id)
	if err != nil {
		t.Fatal(err)
	}
	var out []event.Event
	for _, e := range evs {
		if e.Type == typ {
			out = append(out, e)
		}
	}
	return out
}

func spendOf(t *testing.T, f *fixture, id string) Spend {
	t.Helper()
	rows, err := f.store.Tree(testCtx(t), id)
	if err != nil {
		t.Fatal(err)
	}
	return Spends(rows)[id]
}

// An unpriced model with a dollar budget does not start: the error names
// the model and the prices key. Without a dollar budget it runs, and its
// cost is unknown (null in the trace, unknown in listings), never $0.
func TestUnpricedModel(t *testing.T) {
	f := newFixture(t, map[string]string{"a.txt": "a\n"}, map[string][]turn{"": {
		say(1000, "read_file", args{"path": "a.txt"}),
		say(1000, "finish", args{"summary": "done"}),
	}})
	unknown := func(_, _ string, u model.Usage) (float64, model.CostSource) { return 0, model.CostUnknown }
	h := f.pricedHarness(t, unknown, nil)
	c := goal("read")
	c.Model = contract.Model{Provider: "openai-compatible", Name: "llama3.1:8b"}
	c.Budget.CostUSD = 2
	_, err := h.Start(testCtx(t), c)
	if !errors.Is(err, ErrConfig) || !errors.Is(err, ErrUnpriced) {
		t.Fatalf("start with a dollar budget on an unpriced model: %v, want ErrConfig and ErrUnpriced", err)
	}
	for _, want := range []string{`"llama3.1:8b"`, `prices."llama3.1:8b"`, "budget.cost_usd"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %s", err, want)
		}
	}
	if f.prov.calls != 0 {
		t.Errorf("%d model calls before the refusal", f.prov.calls)
	}

	c.Budget.CostUSD = 0
	r, err := h.Start(testCtx(t), c)
	if err != nil {
		t.Fatal(err)
	}
	res := r.Wait()
	if res.Outcome != OutcomeUnverified || res.Unpriced != 2 {
		t.Fatalf("outcome %s, unpriced %d; want unverified, 2", res.Outcome, res.Unpriced)
	}
	sp := spendOf(t, f, res.RunID)
	if sp.CostKnown() || sp.Unpriced != 2 || sp.CostText() != "unknown" {
		t.Errorf("spend %+v (%q): want an unknown cost", sp, sp.CostText())
	}
	for _, e := range storedEvents(t, f, res.RunID, event.TypeModelTurn) {
		if p := e.Payload.(*event.ModelTurn); p.CostSource != "unknown" || p.CostUSD != nil {
			t.Errorf("model_turn prices an unpriced call: %+v", p)
		}
	}
}

// reporting is a provider that reports each call's charge.
type reporting struct {
	*script
	usd float64
}

func (r reporting) ReportsCost() bool { return true }

func (r reporting) Complete(ctx context.Context, req *model.Request) (*model.Response, error) {
	resp, err := r.script.Complete(ctx, req)
	if err == nil {
		c := r.usd
		resp.CostUSD = &c
	}
	return resp, err
}

// A provider's reported charge prices each call (cost_source provider),
// even for a model without a price, and the dollar budget stops the run
// on those charges without ever being overdrawn.
func TestReportedCostStopsRun(t *testing.T) {
	turns := []turn{}
	for range 8 {
		turns = append(turns, say(1000, "read_file", args{"path": "a.txt"}))
	}
	f := newFixture(t, map[string]string{"a.txt": "a\n"}, map[string][]turn{"": turns})
	prov := reporting{f.prov, 0.01}
	unknown := func(_, _ string, u model.Usage) (float64, model.CostSource) { return 0, model.CostUnknown }
	h, err := New(Options{Root: f.root, Store: f.store, Approver: f.appr, Sandbox: copySandbox{t}, MaxTokens: 200, Cost: unknown,
		Providers: func(*contract.Contract, RetryReporter) (model.Provider, error) { return prov, nil }})
	if err != nil {
		t.Fatal(err)
	}
	c := goal("read")
	c.Model = contract.Model{Provider: "openrouter", Name: "some/unpriced-model"}
	c.Budget.CostUSD = 0.035
	r, err := h.Start(testCtx(t), c)
	if err != nil {
		t.Fatalf("an unpriced model whose provider reports its charge must start: %v", err)
	}
	res := r.Wait()
	if res.Outcome != OutcomeBudgetExceeded || ExceededLimit(res.Err.Error()) != LimitCost {
		t.Fatalf("outcome %s (%v), want budget_exceeded on the cost budget", res.Outcome, res.Err)
	}
	if res.Steps < 1 || res.CostUSD > c.Budget.CostUSD || math.Abs(res.CostUSD-0.01*float64(res.Steps)) > 1e-9 {
		t.Errorf("%d steps cost $%v: want the reported $0.01 a call, within $%v", res.Steps, res.CostUSD, c.Budget.CostUSD)
	}
	for _, e := range storedEvents(t, f, res.RunID, event.TypeModelTurn) {
		if p := e.Payload.(*event.ModelTurn); p.CostSource != "provider" || p.CostUSD == nil || *p.CostUSD != 0.01 {
			t.Errorf("model_turn %+v: want the provider's charge", p)
		}
	}
}

// The model a resolver picks (a --model override) is the one priced, in
// the estimate and the charge, and the one run_started names.
func TestOverrideIsPriced(t *testing.T) {
	f := newFixture(t, nil, map[string][]turn{"": {say(1000, "finish", args{"summary": "s"})}})
	price := func(_, name string, u model.Usage) (float64, model.CostSource) {
		per := map[string]float64{"cheap": 1e-6, "dear": 1e-4}[name]
		return float64(u.Total()) * per, model.CostTable
	}
	h := f.pricedHarness(t, price, func(m contract.Model) contract.Model { m.Name = "dear"; return m })
	c := goal("g")
	c.Model = contract.Model{Provider: "anthropic", Name: "cheap"}
	res := f.runWith(t, h, c)
	if want := 1100 * 1e-4; math.Abs(res.CostUSD-want) > 1e-12 {
		t.Errorf("cost $%v, want the override's $%v", res.CostUSD, want)
	}
	started := storedEvents(t, f, res.RunID, event.TypeRunStarted)
	if len(started) != 1 || started[0].Payload.(*event.RunStarted).Model != "dear" {
		t.Errorf("run_started %v, want model dear", started)
	}
	if reqs := f.prov.requests(); len(reqs) != 1 || reqs[0].Model != "dear" {
		t.Errorf("the call asked for %v", reqs)
	}
}

func (f *fixture) runWith(t *testing.T, h *Harness, c *contract.Contract) *Result {
	t.Helper()
	r, err := h.Start(testCtx(t), c)
	if err != nil {
		t.Fatal(err)
	}
	return r.Wait()
}

// budgetTurns edits two files and reads between, then finishes: every
// tool call changes something or shows it, so a repeated call would show
// in the trace and in the files.
func budgetTurns() map[string][]turn {
	return map[string][]turn{"": {
		say(1000, "read_file", args{"path": "a.txt"}),
		say(1000, "edit_file", args{"path": "a.txt", "old": "a", "new": "a1"}),
		say(1000, "read_file", args{"path": "b.txt"}),
		say(1000, "edit_file", args{"path": "b.txt", "old": "b", "new": "b1"}),
		say(1000, "edit_file", args{"path": "a.txt", "old": "a1", "new": "a12"}),
		say(1000, "finish", args{"summary": "edited"}),
	}}
}

var budgetFiles = map[string]string{"a.txt": "a\n", "b.txt": "b\n"}

type runTotals struct {
	steps     int
	tokens    int64
	cost      float64
	toolCalls []string
	changes   string
}

func totalsOf(t *testing.T, f *fixture, res *Result) runTotals {
	t.Helper()
	tt := runTotals{steps: res.Steps, tokens: res.Usage.Total(), cost: res.CostUSD}
	for _, e := range storedEvents(t, f, res.RunID, event.TypeToolCall) {
		p := e.Payload.(*event.ToolCall)
		tt.toolCalls = append(tt.toolCalls, p.Tool+" "+p.Arguments)
	}
	if res.Changes != nil {
		for _, c := range res.Changes.Changes() {
			tt.changes += c.Path + "=" + string(c.Content) + ";"
		}
	}
	return tt
}

// A run stopped by each kind of budget, raised and resumed, finishes with
// the same steps, tokens, cost, tool calls and changes as an uninterrupted
// run with the larger budget: nothing is charged twice and no tool call is
// repeated.
func TestRaiseAndResume(t *testing.T) {
	big := contract.Budget{Steps: 50, Tokens: 1_000_000, CostUSD: 10, Wall: time.Hour}
	ref := newFixture(t, budgetFiles, budgetTurns())
	c := goal("edit both")
	c.Budget = big
	refRes := ref.runWith(t, ref.pricedHarness(t, tablePrice, nil), c)
	if refRes.Outcome != OutcomeApplied {
		t.Fatalf("reference run: %s (%v)", refRes.Outcome, refRes.Err)
	}
	want := totalsOf(t, ref, refRes)

	tests := []struct {
		limit Limit
		small func(b *contract.Budget)
		raise contract.Budget
	}{
		{LimitSteps, func(b *contract.Budget) { b.Steps = 2 }, contract.Budget{Steps: big.Steps}},
		{LimitTokens, func(b *contract.Budget) { b.Tokens = want.tokens / 2 }, contract.Budget{Tokens: big.Tokens}},
		{LimitCost, func(b *contract.Budget) { b.CostUSD = want.cost / 2 }, contract.Budget{CostUSD: big.CostUSD}},
		{LimitWall, func(b *contract.Budget) { b.Wall = 200 * time.Millisecond }, contract.Budget{Wall: big.Wall}},
	}
	for _, tt := range tests {
		t.Run(string(tt.limit), func(t *testing.T) {
			f := newFixture(t, budgetFiles, budgetTurns())
			// For the wall budget, the third call hangs until the run's
			// deadline cuts it; after the raise it answers.
			prov := &hangAt{script: f.prov, turn: 2, hang: tt.limit == LimitWall}
			c := goal("edit both")
			c.Budget = big
			tt.small(&c.Budget)
			h := f.pricedHarness(t, tablePrice, nil, prov)
			stopped := f.runWith(t, h, c)
			var be *BudgetError
			if stopped.Outcome != OutcomeBudgetExceeded || stopped.StopLimit() != tt.limit || !errors.As(stopped.Err, &be) {
				t.Fatalf("small budget: %s (%v), want budget_exceeded on %s, typed (BudgetError)", stopped.Outcome, stopped.Err, tt.limit)
			}
			prov.stop()
			t.Logf("stopped by %s after %d of %d steps", tt.limit, stopped.Steps, want.steps)
			if (stopped.Steps < 1 && tt.limit != LimitWall) || stopped.Steps >= want.steps {
				t.Fatalf("stopped after %d steps; want some of the %d", stopped.Steps, want.steps)
			}
			// Without a raise, resume is a no-op that keeps the outcome.
			r, err := f.pricedHarness(t, tablePrice, nil, prov).Resume(testCtx(t), stopped.RunID)
			if err != nil {
				t.Fatal(err)
			}
			if res := r.Wait(); res.Outcome != OutcomeBudgetExceeded || res.StopLimit() != tt.limit {
				t.Fatalf("plain resume: %s, stopped by %q (the stored run's), want %s", res.Outcome, res.StopLimit(), tt.limit)
			}
			r, err = f.pricedHarness(t, tablePrice, nil, prov).ResumeWith(testCtx(t), stopped.RunID, tt.raise)
			if err != nil {
				t.Fatal(err)
			}
			res := r.Wait()
			if res.Outcome != OutcomeApplied {
				t.Fatalf("raised and resumed: %s (%v)", res.Outcome, res.Err)
			}
			got := totalsOf(t, f, res)
			if got.steps != want.steps || got.tokens != want.tokens || math.Abs(got.cost-want.cost) > 1e-12 {
				t.Errorf("resumed run: %d steps, %d tokens, $%v; uninterrupted: %d, %d, $%v",
					got.steps, got.tokens, got.cost, want.steps, want.tokens, want.cost)
			}
			if strings.Join(got.toolCalls, "\n") != strings.Join(want.toolCalls, "\n") {
				t.Errorf("tool calls:\n%s\nuninterrupted:\n%s", strings.Join(got.toolCalls, "\n"), strings.Join(want.toolCalls, "\n"))
			}
			if got.changes != want.changes {
				t.Errorf("changes %q, uninterrupted %q", got.changes, want.changes)
			}
			if a, b := f.read(t, "a.txt"), f.read(t, "b.txt"); a != "a12\n" || b != "b1\n" {
				t.Errorf("files after the resumed run: a.txt %q, b.txt %q", a, b)
			}
			raised := storedEvents(t, f, res.RunID, EventBudgetRaised)
			if len(raised) != 1 || raised[0].Payload.(*event.BudgetRaised).Was != string(OutcomeBudgetExceeded) {
				t.Errorf("budget_raised events: %v", raised)
			}
			sp := spendOf(t, f, res.RunID)
			wantLimits := c.Budget
			switch tt.limit {
			case LimitSteps:
				wantLimits.Steps = big.Steps
			case LimitTokens:
				wantLimits.Tokens = big.Tokens
			case LimitCost:
				wantLimits.CostUSD = big.CostUSD
			case LimitWall:
				wantLimits.Wall = big.Wall
			}
			if sp.Limits != wantLimits {
				t.Errorf("stored limits %+v, want %+v", sp.Limits, wantLimits)
			}
		})
	}
}

// A resume may only raise: a lower limit, a limit on a dimension the run
// has none in, a wall budget already spent, and a raise for a run that
// did not stop on its budget are usage errors that change nothing.
func TestRaiseRefusals(t *testing.T) {
	f := newFixture(t, budgetFiles, budgetTurns())
	c := goal("edit both")
	c.Budget = contract.Budget{Steps: 2, CostUSD: 5}
	h := f.pricedHarness(t, tablePrice, nil)
	stopped := f.runWith(t, h, c)
	if stopped.Outcome != OutcomeBudgetExceeded {
		t.Fatalf("outcome %s", stopped.Outcome)
	}
	for name, raise := range map[string]contract.Budget{
		"lower steps":        {Steps: 1},
		"lower dollars":      {CostUSD: 1},
		"tokens where none":  {Tokens: 100},
		"wall where none":    {Wall: time.Hour},
		"negative":           {Steps: -1},
		"raise and lower":    {Steps: 10, CostUSD: 1},
		"not a dollar value": {CostUSD: math.NaN()},
	} {
		_, err := h.ResumeWith(testCtx(t), stopped.RunID, raise)
		if !errors.Is(err, ErrConfig) {
			t.Errorf("%s: %v, want ErrConfig", name, err)
		}
	}
	row, err := f.store.Run(testCtx(t), stopped.RunID)
	if err != nil {
		t.Fatal(err)
	}
	if row.Outcome != string(OutcomeBudgetExceeded) || strings.Contains(string(row.State), `"budget"`) {
		t.Errorf("a refused raise changed the run: %s %s", row.Outcome, row.State)
	}

	done := newFixture(t, nil, map[string][]turn{"": {say(10, "finish", args{"summary": "s"})}})
	res := done.runWith(t, done.pricedHarness(t, tablePrice, nil), goalWith(contract.Budget{Steps: 5}))
	if _, err := done.h.ResumeWith(testCtx(t), res.RunID, contract.Budget{Steps: 9}); !errors.Is(err, ErrConfig) {
		t.Errorf("raising a finished (%s) run: %v, want ErrConfig", res.Outcome, err)
	}

	wall := goalWith(contract.Budget{Steps: 2, Wall: time.Hour})
	stopped = f.runWith(t, h, wall)
	if _, err := raiseBudget(wall.Budget, contract.Budget{Wall: 2 * time.Hour}, time.Now().Add(-3*time.Hour), time.Now()); err == nil {
		t.Error("a wall budget already spent was accepted")
	}
	if stopped.Outcome != OutcomeBudgetExceeded {
		t.Errorf("outcome %s", stopped.Outcome)
	}
}

func goalWith(b contract.Budget) *contract.Contract {
	c := goal("g")
	c.Budget = b
	return c
}

// hangAt is a script whose given turn, while hang is set, waits for the
// call's context to end (the run's wall deadline) instead of answering.
type hangAt struct {
	*script
	turn    int
	hang    bool
	stopped atomic.Bool
}

func (h *hangAt) stop() { h.stopped.Store(true) }

func (h *hangAt) Complete(ctx context.Context, req *model.Request) (*model.Response, error) {
	n := 0
	for _, m := range req.Messages {
		if m.Role == model.RoleAssistant {
			n++
		}
	}
	if h.hang && !h.stopped.Load() && n == h.turn {
		<-ctx.Done()
		return nil, &model.Error{Class: model.ClassTimeout, Provider: "script", Err: ctx.Err()}
	}
	return h.script.Complete(ctx, req)
}

// A sub-agent's draws are the tree's spend: its budget events carry the
// root's running totals (what the editor's progress of the root shows),
// and Spends rolls its cost into the root's.
func TestSubAgentSpendReachesRoot(t *testing.T) {
	f := newFixture(t, nil, map[string][]turn{
		"":      {say(1000, "spawn_agent", args{"goal": "child"}), say(1000, "finish", args{"summary": "s"})},
		"child": {say(2000, "finish", args{"summary": "c"})},
	})
	res := f.runWith(t, f.pricedHarness(t, tablePrice, nil), goal("parent"))
	if res.Outcome != OutcomeUnverified && res.Outcome != OutcomeApplied {
		t.Fatalf("outcome %s (%v)", res.Outcome, res.Err)
	}
	call := func(in int64) float64 {
		c, _ := tablePrice("", "", model.Usage{InputTokens: in, OutputTokens: in / 10})
		return c
	}
	var childEv *event.Event
	for _, e := range storedEvents(t, f, res.RunID, event.TypeBudget) {
		if e.Run != res.RunID {
			childEv = &e
		}
	}
	if childEv == nil {
		t.Fatal("no budget event of the sub-agent")
	}
	cb := childEv.Payload.(*event.Budget)
	if cb.RootRun != res.RunID {
		t.Errorf("child budget event names root %v, want %s", cb.RootRun, res.RunID)
	}
	if got, want := cb.RootCostUSD, call(1000)+call(2000); math.Abs(got-want) > 1e-12 {
		t.Errorf("root_cost_usd in the child's event = %v, want the root's first call plus the child's, %v", got, want)
	}
	if got := cb.RootTokens; got != 1100+2200 {
		t.Errorf("root_tokens = %v, want 3300", got)
	}
	sp := spendOf(t, f, res.RunID)
	if want := 2*call(1000) + call(2000); math.Abs(sp.CostUSD-want) > 1e-12 || sp.Tokens != 2*1100+2200 {
		t.Errorf("root spend $%v, %d tokens; want $%v, 4400 tokens (the sub-agent's included)", sp.CostUSD, sp.Tokens, want)
	}
}

// testCtx bounds a test's runs: a harness that stops answering fails the
// test instead of hanging it.
func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}
