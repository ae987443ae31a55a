package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/ioh-lsp/ioh-lsp/internal/agent/event"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/model"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/trace"
)

// stepCtx gathers what one step commits: its usage and cost and its events
// (emitted live as they happen, stored with the step).
type stepCtx struct {
	a      *agentRun
	usage  model.Usage
	cost   float64
	mu     sync.Mutex
	events []event.Event
}

func (a *agentRun) newStepCtx(u model.Usage, cost float64) *stepCtx {
	return &stepCtx{a: a, usage: u, cost: cost}
}

// add records and emits an event; safe for the parallel tool calls.
func (sc *stepCtx) add(e event.Event) {
	sc.mu.Lock()
	sc.events = append(sc.events, e)
	sc.mu.Unlock()
	sc.a.emit(e)
}

// Emit lets a stepCtx serve as the sink of verification.
func (sc *stepCtx) Emit(e event.Event) {
	if e.Run == "" {
		e.Run, e.Parent, e.Step = sc.a.id, sc.a.parent, sc.a.totals.Steps+1
	}
	sc.add(e)
}

// commit writes the step in one transaction: transcript delta, usage,
// cost, the change set when it changed, resume state and events. Only
// after it succeeds does the in-memory run advance; the write survives
// cancellation of the run (it records what already happened).
func (a *agentRun) commit(ctx context.Context, sc *stepCtx, msgs []model.Message) error {
	n := a.totals.Steps + 1
	mj, err := json.Marshal(msgs)
	if err != nil {
		return fmt.Errorf("encode step %d: %w", n, err)
	}
	if msgs == nil {
		mj = json.RawMessage("[]")
	}
	uj, _ := json.Marshal(sc.usage)
	t := a.totals
	t.Steps = n
	t.InputTokens += sc.usage.InputTokens
	t.OutputTokens += sc.usage.OutputTokens
	t.CacheReadTokens += sc.usage.CacheReadTokens
	t.CacheWriteTokens += sc.usage.CacheWriteTokens
	t.CostUSD += sc.cost
	var changes []byte
	fp := a.cs.Fingerprint()
	if fp != a.lastFP {
		if changes, err = a.h.marshalChanges(a.cs); err != nil {
			return fmt.Errorf("snapshot change set at step %d: %w", n, err)
		}
		if changes == nil {
			changes = []byte{}
		}
	}
	for i := range sc.events {
		sc.events[i].Step = n
	}
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	err = a.h.opts.Store.CommitStep(cctx, &trace.Step{
		Run: a.id, N: n, Time: time.Now(), Messages: mj, Usage: uj, CostUSD: sc.cost,
		Changes: changes, State: a.st.encode(), Totals: t, Events: sc.events,
	})
	if err != nil {
		return err
	}
	a.totals = t
	a.lastFP = fp
	a.msgs = append(a.msgs, msgs...)
	return nil
}
