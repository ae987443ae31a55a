package agent

import (
	"errors"
	"fmt"
	"math"

	"github.com/ioh-lsp/ioh-lsp/internal/agent/event"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/model"
)

// bytesPerToken is a deliberately low bytes-per-token ratio, so the
// estimate of a request's input tokens errs high (real tokenizers average
// about 4 bytes per token on code and prose).
const bytesPerToken = 3

// minOutputTokens: a call that cannot afford this many output tokens is
// not worth sending.
const minOutputTokens = 64

// estimateInput estimates a request's input tokens from its size.
func estimateInput(req *model.Request) int64 {
	return int64(requestBytes(req)/bytesPerToken + 1)
}

// requestBytes is the size of a request's text: system prompt, messages
// (with a small allowance per part) and tool specs.
func requestBytes(req *model.Request) int {
	n := len(req.System)
	for _, m := range req.Messages {
		n += len(m.Text) + 16
		for _, c := range m.ToolCalls {
			n += len(c.Name) + len(c.Arguments) + len(c.ID) + 16
		}
		for _, r := range m.ToolResults {
			n += len(r.Content) + len(r.CallID) + 16
		}
	}
	for _, t := range req.Tools {
		n += len(t.Name) + len(t.Description) + len(t.Schema)
	}
	return n
}

// estimateTokens is the reservation for a call: its estimated counted
// input plus the most output it may produce.
func (a *agentRun) estimateTokens(req *model.Request) int64 {
	return a.countedInput(req) + int64(req.MaxTokens)
}

// countedInput estimates the input tokens of req the token budget counts:
// what the last call's provider cached (read or written) is expected to
// be read from the cache this time, and cache reads are not counted. A
// call whose prefix was not found cached draws more than this; its actual
// draw is settled when it answers and the next step is checked against it.
func (a *agentRun) countedInput(req *model.Request) int64 {
	in := estimateInput(req)
	return max(in-a.cached, in/10)
}

// checkBudget refuses the step that would cross a budget, before it is
// sent; it also trims req.MaxTokens to what the token budget has left.
func (a *agentRun) checkBudget(req *model.Request) *end {
	if a.c.Budget.Steps > 0 && a.totals.Steps+1 > a.c.Budget.Steps {
		return budgetStop(LimitSteps, fmt.Errorf("step budget of %d spent", a.c.Budget.Steps))
	}
	leftTok, leftCost := a.ledger.Left()
	in := a.countedInput(req)
	if leftTok >= 0 {
		if leftTok-in < minOutputTokens {
			return budgetStop(LimitTokens, fmt.Errorf("token budget: the next call needs about %d input tokens, %d are left", in, leftTok))
		}
		req.MaxTokens = int(min(int64(req.MaxTokens), leftTok-in))
	}
	if leftCost >= 0 {
		if est := a.estimateCost(req); est > leftCost {
			err := fmt.Errorf("cost budget: the next call may cost $%.4f, $%.4f is left", est, leftCost)
			if a.parent == "" {
				// The root's ledger is the run's limit: the least raise is
				// what it spent plus this call.
				a.st.NeedCostUSD = minCostRaise(a.c.Budget.CostUSD - leftCost + est)
				err = fmt.Errorf("%w; raise the limit to at least $%.2f with `ioh-lsp resume %s --budget-usd %.2f`",
					err, a.st.NeedCostUSD, a.id, a.st.NeedCostUSD)
			}
			return budgetStop(LimitCost, err)
		}
	}
	return nil
}

// minCostRaise is usd rounded up to the cent (a float's noise below a
// cent does not round up).
func minCostRaise(usd float64) float64 {
	return math.Ceil(usd*100-1e-6) / 100
}

// overdraw is the limit of a ledger refusal (a sibling drew first), ""
// for any other error.
func overdraw(err error) Limit {
	var o errOverdraw
	if errors.As(err, &o) {
		return o.limit
	}
	return ""
}

// budgetEvent is the budget draw of a step: this call, the run's and the
// tree's spend so far (the tree's root's, for progress), and the limits.
// A cost nothing could price is null, never 0.
func (a *agentRun) budgetEvent(u model.Usage, cost float64, src model.CostSource) *event.Budget {
	tok, usd := a.ledger.Spent()
	rootTok, rootUSD, rootUnpriced := a.ledger.TreeSpent()
	e := &event.Budget{
		Tokens: u.Total(), CostUSD: costField(cost, src), CostSource: string(src), Steps: a.totals.Steps + 1,
		RunTokens: a.totals.Tokens() + u.Total(), RunCostUSD: a.totals.CostUSD + cost,
		CacheReadTokens: u.CacheReadTokens, RunCacheReadTokens: a.totals.CacheReadTokens + u.CacheReadTokens,
		TreeTokens: tok, TreeCostUSD: usd,
		RootRun: a.rootID, RootTokens: rootTok, RootCostUSD: rootUSD, RootCostKnown: rootUnpriced == 0,
	}
	if b := a.c.Budget; b.Steps > 0 || b.Tokens > 0 || b.CostUSD > 0 || b.Wall > 0 {
		e.BudgetLimits = &event.BudgetLimits{LimitSteps: b.Steps, LimitTokens: b.Tokens, LimitCostUSD: b.CostUSD}
		if b.Wall > 0 {
			e.LimitWall = b.Wall.String()
		}
	}
	return e
}
