package agent

import (
	"errors"
	"fmt"

	"github.com/ioh-lsp/ioh-lsp/agent/model"
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
	return int64(n/bytesPerToken + 1)
}

// estimateTokens is the reservation for a call: its estimated input plus
// the most output it may produce.
func estimateTokens(req *model.Request) int64 {
	return estimateInput(req) + int64(req.MaxTokens)
}

// checkBudget refuses the step that would cross a budget, before it is
// sent; it also trims req.MaxTokens to what the token budget has left.
func (a *agentRun) checkBudget(req *model.Request) *end {
	if a.c.Budget.Steps > 0 && a.totals.Steps+1 > a.c.Budget.Steps {
		return &end{OutcomeBudgetExceeded, fmt.Errorf("step budget of %d spent", a.c.Budget.Steps)}
	}
	leftTok, leftCost := a.ledger.Left()
	in := estimateInput(req)
	if leftTok >= 0 {
		if leftTok-in < minOutputTokens {
			return &end{OutcomeBudgetExceeded, fmt.Errorf("token budget: the next call needs about %d input tokens, %d are left", in, leftTok)}
		}
		req.MaxTokens = int(min(int64(req.MaxTokens), leftTok-in))
	}
	if leftCost >= 0 {
		if est := a.estimateCost(req); est > leftCost {
			return &end{OutcomeBudgetExceeded, fmt.Errorf("cost budget: the next call may cost $%.4f, $%.4f is left", est, leftCost)}
		}
	}
	return nil
}

// isOverdraw reports a ledger refusal (a sibling drew first).
func isOverdraw(err error) bool {
	var o errOverdraw
	return errors.As(err, &o)
}

// budgetFields is the budget draw of a step: this call, the run's and the
// tree's spend so far (the tree's root's, for progress), and the limits.
// A cost nothing could price is null, never 0.
func (a *agentRun) budgetFields(u model.Usage, cost float64, src model.CostSource) map[string]any {
	tok, usd := a.ledger.Spent()
	rootTok, rootUSD, rootUnpriced := a.ledger.TreeSpent()
	f := map[string]any{
		"tokens": u.Total(), "cost_usd": cost, "cost_source": string(src),
		"run_tokens": a.totals.Tokens() + u.Total(), "run_cost_usd": a.totals.CostUSD + cost,
		"tree_tokens": tok, "tree_cost_usd": usd, "steps": a.totals.Steps + 1,
		"root_run": a.rootID, "root_tokens": rootTok, "root_cost_usd": rootUSD, "root_cost_known": rootUnpriced == 0,
	}
	if src == model.CostUnknown {
		f["cost_usd"] = nil
	}
	if b := a.c.Budget; b.Steps > 0 || b.Tokens > 0 || b.CostUSD > 0 || b.Wall > 0 {
		f["limit_steps"], f["limit_tokens"], f["limit_cost_usd"] = b.Steps, b.Tokens, b.CostUSD
		if b.Wall > 0 {
			f["limit_wall"] = b.Wall.String()
		}
	}
	return f
}
