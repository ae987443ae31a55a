package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/ioh-lsp/ioh-lsp/internal/agent/event"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/model"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/tools"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/trace"
)

// end is how a loop iteration ends the run.
type end struct {
	outcome Outcome
	err     error
}

// drive runs the agent to an outcome and records it. It is the body of a
// run's goroutine (and of a sub-agent's spawn call).
func (a *agentRun) drive(ctx context.Context) *Result {
	if !a.deadline.IsZero() {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, a.deadline)
		defer cancel()
	}
	var e end
	if a.st.Phase == phaseProposal {
		e = a.propose(ctx)
	} else {
		e = a.loop(ctx)
	}
	return a.conclude(ctx, e)
}

// loop steps until the run ends.
func (a *agentRun) loop(ctx context.Context) end {
	for {
		if e, ok := a.interrupted(ctx); ok {
			return e
		}
		var e *end
		var err error
		if a.st.Pending != nil {
			e, err = a.resumePending(ctx)
		} else {
			e, err = a.step(ctx)
		}
		if err != nil {
			if errors.Is(err, trace.ErrStorage) || errors.Is(err, trace.ErrStepExists) {
				// The trace could not record the step (a storage failure,
				// or another process committed it: it drives the run now).
				// Not the provider's failure: the run stops where its last
				// committed step left it, and resume continues from there.
				return end{OutcomeInterrupted, err}
			}
			if ie, ok := a.interrupted(ctx); ok {
				return ie
			}
			return end{OutcomeProviderFailed, err}
		}
		if e != nil {
			return *e
		}
	}
}

// interrupted reports a cancelled context or a spent wall budget.
func (a *agentRun) interrupted(ctx context.Context) (end, bool) {
	if !a.deadline.IsZero() && !time.Now().Before(a.deadline) {
		return *budgetStop(LimitWall, fmt.Errorf("wall budget of %s spent", a.c.Budget.Wall)), true
	}
	if ctx.Err() != nil {
		return end{OutcomeCancelled, context.Cause(ctx)}, true
	}
	return end{}, false
}

// step is one model call and the tool calls it asks for, committed as one
// transaction. A nil end means keep going.
func (a *agentRun) step(ctx context.Context) (*end, error) {
	req := a.request()
	if e := a.checkBudget(req); e != nil {
		return e, nil
	}
	resp, usage, cost, src, err := a.call(ctx, req)
	if err != nil {
		// No step commits the retries of a call that failed: they are
		// stored on their own, as they were printed.
		a.storeRetries(ctx)
	}
	if l := overdraw(err); l != "" {
		return budgetStop(l, err), nil
	}
	if err != nil {
		return nil, err
	}
	asst := model.Message{Role: model.RoleAssistant, Text: a.h.redact.String(resp.Text), ToolCalls: resp.ToolCalls}
	for i := range asst.ToolCalls {
		if asst.ToolCalls[i].ID == "" {
			asst.ToolCalls[i].ID = fmt.Sprintf("call_%d_%d", a.totals.Steps+1, i)
		}
		if len(asst.ToolCalls[i].Arguments) == 0 {
			asst.ToolCalls[i].Arguments = json.RawMessage("{}")
		}
	}
	sc := a.newStepCtx(usage, cost)
	sc.events = append(sc.events, a.takeRetries()...)
	sc.add(a.event(&event.ModelTurn{
		Text: asst.Text, ToolCalls: len(asst.ToolCalls), Provider: resp.Provider, Model: resp.Model,
		InputTokens: usage.InputTokens, OutputTokens: usage.OutputTokens,
		CacheReadTokens: usage.CacheReadTokens, CacheWriteTokens: usage.CacheWriteTokens,
		CostUSD: costField(cost, src), CostSource: string(src),
	}))
	sc.add(a.event(a.budgetEvent(usage, cost, src)))
	return a.runTurn(ctx, sc, asst, nil)
}

// runTurn executes asst's tool calls (results already holds answers from
// before a deferral), commits the step and decides what comes next.
func (a *agentRun) runTurn(ctx context.Context, sc *stepCtx, asst model.Message, done []model.ToolResult) (*end, error) {
	results, finished, deferred, err := a.execCalls(ctx, sc, asst.ToolCalls, done)
	if err != nil {
		// The model call was paid for: record its usage (the transcript
		// stays as it was, so a resume asks again).
		if sc.usage != (model.Usage{}) {
			if cerr := a.commit(ctx, sc, nil); cerr != nil {
				a.h.log.Warn("record an interrupted step", "run", a.id, "err", cerr)
			}
		}
		return nil, err
	}
	if deferred {
		a.st.Pending = &pendingTurn{Assistant: asst, Results: results}
		if err := a.commit(ctx, sc, nil); err != nil {
			return nil, err
		}
		return &end{OutcomeAwaitingApproval, errors.New("an act awaits approval")}, nil
	}
	a.st.Pending = nil
	user := model.Message{Role: model.RoleUser, ToolResults: results}
	if len(asst.ToolCalls) == 0 {
		user.Text = nudgeText
	}
	stalled := a.checkStall(asst.ToolCalls, &user)
	if err := a.commit(ctx, sc, []model.Message{asst, user}); err != nil {
		return nil, err
	}
	if stalled != "" {
		return &end{OutcomeStalled, errors.New(stalled)}, nil
	}
	if finished == proposeNext {
		e := a.propose(ctx)
		return &e, nil
	}
	return finished, nil
}

// resumePending finishes a turn cut short by a deferral: the remaining
// calls are checked again (the policy may have changed) and asked again.
func (a *agentRun) resumePending(ctx context.Context) (*end, error) {
	p := a.st.Pending
	sc := a.newStepCtx(model.Usage{}, 0)
	return a.runTurn(ctx, sc, p.Assistant, p.Results)
}

// request builds the next model request from the transcript, masking
// old tool results once it grows past the threshold (mask.go).
func (a *agentRun) request() *model.Request {
	req := &model.Request{
		Model: a.c.Model.Name, System: a.system, Messages: a.msgs,
		Tools: tools.Specs(a.tools), MaxTokens: a.h.opts.MaxTokens, Agent: a.st.Agent,
	}
	a.updateMask(req)
	req.Messages = a.view()
	return req
}

// call sends req, masking every older tool result once on a context
// overflow (each keeps its stub), and settles the
// ledger with what the call cost and what priced it; a call nothing could
// price is counted as unpriced (in the ledger and the run's state, which
// the step commits).
func (a *agentRun) call(ctx context.Context, req *model.Request) (*model.Response, model.Usage, float64, model.CostSource, error) {
	compacted, attempt := false, 1
	for {
		res, err := a.ledger.Reserve(a.estimateTokens(req), a.estimateCost(req))
		if err != nil {
			return nil, model.Usage{}, 0, "", err
		}
		sctx, stream := a.streamText(ctx, attempt)
		resp, err := a.provider.Complete(sctx, req)
		stream.end(err == nil)
		if err != nil {
			res.Settle(0, 0)
			if model.ClassOf(err) == model.ClassContextOverflow && !compacted && a.maskAll() {
				compacted, attempt = true, stream.attempt+1
				a.emit(a.event(&event.Retry{Class: string(model.ClassContextOverflow), Action: "masked older tool results"}))
				req = a.request()
				if e := a.checkBudget(req); e != nil {
					return nil, model.Usage{}, 0, "", errOverdraw{e.err.Error(), limitOf(e.err)}
				}
				continue
			}
			return nil, model.Usage{}, 0, "", fmt.Errorf("model call: %w", err)
		}
		cost, src := a.price(resp)
		res.Settle(resp.Usage.Total(), cost)
		a.cached = resp.Usage.CacheReadTokens + resp.Usage.CacheWriteTokens
		if src == model.CostUnknown {
			a.ledger.ChargeUnpriced(1)
			a.st.Unpriced++
		}
		return resp, resp.Usage, cost, src, nil
	}
}

// costField is a call's cost for an event: null when nothing priced it.
func costField(cost float64, src model.CostSource) *float64 {
	if src == model.CostUnknown {
		return nil
	}
	return &cost
}

const nudgeText = "You answered without a tool call. Continue with tool calls, or call finish with a summary when the task is done."
