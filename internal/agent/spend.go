package agent

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/ioh-lsp/ioh-lsp/internal/agent/contract"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/event"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/model"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/trace"
)

// Pricing: each call costs what the provider reported for it (OpenRouter),
// else what the price table says for the model that answered (the
// configured `prices`, then the built-in table). A call nothing can price
// has an unknown cost: it is counted as unknown, never as $0, and a run
// with a dollar budget does not start unless every model it may call
// (the primary and each fallback) is priced or reports its charge.

// targetsOf lists the provider and models a run may call.
func targetsOf(p model.Provider, c *contract.Contract) []model.Target {
	if t, ok := p.(model.Targeter); ok {
		if ts := t.Targets(); len(ts) > 0 {
			return ts
		}
	}
	return []model.Target{{Provider: p.Name(), Model: c.Model.Name, ReportsCost: model.ReportsCost(p)}}
}

// costOf prices usage u of one provider and model from the table.
func (h *Harness) costOf(provider, name string, u model.Usage) (float64, model.CostSource) {
	if h.opts.Cost == nil {
		return 0, model.CostUnknown
	}
	return h.opts.Cost(provider, name, u)
}

// checkPriced refuses a dollar budget that cannot be enforced: a model the
// run may call that has no price and whose provider reports no charge.
// A default is not a demand: when nobody wrote the dollar limit (the
// contract omitted it and no configuration layer changed the default),
// the run goes without one, says so once, and steps, tokens and wall
// time still bound it (a local model has no price).
func (h *Harness) checkPriced(c *contract.Contract, targets []model.Target) error {
	if c.Budget.CostUSD <= 0 {
		return nil
	}
	for _, t := range targets {
		if t.ReportsCost {
			continue
		}
		if _, src := h.costOf(t.Provider, t.Model, model.Usage{}); src != model.CostUnknown {
			continue
		}
		name := t.Model
		if name == "" {
			name = "(unnamed)"
		}
		if c.Omitted.CostUSD && c.Budget.CostUSD == contract.DefaultCostUSD {
			c.Budget.CostUSD = 0
			h.log.Warn(fmt.Sprintf("model %q (provider %s) has no price: no dollar limit applies to this run and its cost is unknown; "+
				"steps, tokens and wall time still bound it (set prices.%q in the user config to count its cost, or budget.cost_usd to require a limit)", name, t.Provider, name))
			return nil
		}
		return fmt.Errorf("%w: model %q (provider %s) has no price, so budget.cost_usd ($%.2f) cannot be enforced: "+
			"set prices.%q in the user config ($XDG_CONFIG_HOME/ioh/config.yaml: USD per million tokens of input, output, cache_read, cache_write), "+
			"or set budget.cost_usd to 0 to run without a dollar limit", ErrUnpriced, name, t.Provider, c.Budget.CostUSD, name)
	}
	return nil
}

// ErrUnpriced: a run with a dollar budget names a model without a price.
var ErrUnpriced = errors.New("unpriced model")

// price is what one answered call cost and what priced it.
func (a *agentRun) price(resp *model.Response) (float64, model.CostSource) {
	if resp.CostUSD != nil && *resp.CostUSD >= 0 && !math.IsInf(*resp.CostUSD, 0) && !math.IsNaN(*resp.CostUSD) {
		return *resp.CostUSD, model.CostProvider
	}
	prov, name := resp.Provider, resp.Model
	if prov == "" {
		prov = a.provider.Name()
	}
	if name == "" {
		name = a.c.Model.Name
	}
	return a.h.costOf(prov, name, resp.Usage)
}

// estimateCost is the most the next call may cost: its estimated input
// plus its output cap, priced for the dearest model it may reach (the
// primary or a fallback), and never less than the same tokens at the
// run's average charge per token so far. That average is what bounds a
// model that reports its own charge but has no price (nothing bounds its
// first call: the reported charges then stop the run once its spend
// reaches the limit, the last call possibly crossing it).
func (a *agentRun) estimateCost(req *model.Request) float64 {
	u := model.Usage{InputTokens: estimateInput(req), OutputTokens: int64(req.MaxTokens)}
	est := 0.0
	if tok := a.totals.Tokens(); tok > 0 && a.totals.CostUSD > 0 {
		est = a.totals.CostUSD / float64(tok) * float64(u.Total())
	}
	for _, t := range a.targets {
		usd, _ := a.h.costOf(t.Provider, t.Model, u)
		est = max(est, usd)
	}
	return est
}

// Limit names one dimension of a budget.
type Limit string

const (
	LimitSteps  Limit = "steps"
	LimitTokens Limit = "tokens"
	LimitCost   Limit = "cost_usd"
	LimitWall   Limit = "wall"
)

// limitPhrases are how budget errors name each limit; ExceededLimit reads
// them back.
var limitPhrases = []struct {
	phrase string
	limit  Limit
}{{"step budget", LimitSteps}, {"token budget", LimitTokens}, {"cost budget", LimitCost}, {"wall budget", LimitWall}}

// ExceededLimit says which limit stopped a run that ended budget_exceeded,
// from its recorded error; "" when the error names none.
func ExceededLimit(errText string) Limit {
	for _, p := range limitPhrases {
		if strings.Contains(errText, p.phrase) {
			return p.limit
		}
	}
	return ""
}

// raiseBudget returns cur with the non-zero fields of raise. A resume may
// only raise: a field below the run's limit, or a limit given to a
// dimension the run has none in (unlimited), is refused, and so is a wall
// budget the run has already spent (wall time runs from the first start,
// across stops).
func raiseBudget(cur, raise contract.Budget, firstStarted, now time.Time) (contract.Budget, error) {
	nb := cur
	check := func(key string, has, lower bool) error {
		if !has {
			return fmt.Errorf("budget.%s: the run has no %s limit; a resume may only raise a budget, not add one", key, key)
		}
		if lower {
			return fmt.Errorf("budget.%s: a resume may only raise a budget, and the run's limit is higher", key)
		}
		return nil
	}
	if raise.Steps < 0 || raise.Tokens < 0 || raise.CostUSD < 0 || raise.Wall < 0 || math.IsNaN(raise.CostUSD) || math.IsInf(raise.CostUSD, 0) {
		return cur, errors.New("budget: a raised limit must be a positive number")
	}
	if raise.Steps > 0 {
		if err := check("steps", cur.Steps > 0, raise.Steps < cur.Steps); err != nil {
			return cur, fmt.Errorf("%w (steps %d, the run's limit %d)", err, raise.Steps, cur.Steps)
		}
		nb.Steps = raise.Steps
	}
	if raise.Tokens > 0 {
		if err := check("tokens", cur.Tokens > 0, raise.Tokens < cur.Tokens); err != nil {
			return cur, fmt.Errorf("%w (tokens %d, the run's limit %d)", err, raise.Tokens, cur.Tokens)
		}
		nb.Tokens = raise.Tokens
	}
	if raise.CostUSD > 0 {
		if err := check("cost_usd", cur.CostUSD > 0, raise.CostUSD < cur.CostUSD); err != nil {
			return cur, fmt.Errorf("%w ($%.2f, the run's limit $%.2f)", err, raise.CostUSD, cur.CostUSD)
		}
		nb.CostUSD = raise.CostUSD
	}
	if raise.Wall > 0 {
		if err := check("wall", cur.Wall > 0, raise.Wall < cur.Wall); err != nil {
			return cur, fmt.Errorf("%w (wall %s, the run's limit %s)", err, raise.Wall, cur.Wall)
		}
		if spent := now.Sub(firstStarted); spent >= raise.Wall {
			return cur, fmt.Errorf("budget.wall %s is already spent: wall time runs from the run's first start, %s ago, across stops; give more than that",
				raise.Wall, spent.Round(time.Second))
		}
		nb.Wall = raise.Wall
	}
	return nb, nil
}

// effectiveBudget is a stored run's budget: its contract's, or the larger
// one a resume raised it to.
func effectiveBudget(row *trace.RunRow) (contract.Budget, *runState, error) {
	var c contract.Contract
	if len(row.Contract) > 0 {
		if err := json.Unmarshal(row.Contract, &c); err != nil {
			return contract.Budget{}, nil, fmt.Errorf("decode stored contract of %s: %w", row.ID, err)
		}
	}
	st, err := decodeState(row.State)
	if err != nil {
		return contract.Budget{}, nil, err
	}
	if st.Budget != nil {
		return *st.Budget, st, nil
	}
	return c.Budget, st, nil
}

// EventBudgetRaised records a resume that raised a run's budget: `from`
// and `to` are the limits before and after (event.BudgetRaised).
const EventBudgetRaised = event.TypeBudgetRaised

// raise checks a resume's larger budget against the stored run and puts
// it in the row's state (which restore then applies); it returns the
// event recording it, or nil when every limit given is the run's already
// (no raise: nothing changes). Only a run that is in flight, awaiting
// approval or stopped by its budget can take one.
func (h *Harness) raise(row *trace.RunRow, raise contract.Budget) (*event.Event, error) {
	switch Outcome(row.Outcome) {
	case OutcomeBudgetExceeded, OutcomeRunning, OutcomeAwaitingApproval, OutcomeProviderFailed:
	default:
		return nil, configError{fmt.Errorf("the run ended %s; only a run stopped by its budget (or still resumable) can continue with a larger budget", row.Outcome)}
	}
	cur, st, err := effectiveBudget(row)
	if err != nil {
		return nil, err
	}
	nb, err := raiseBudget(cur, raise, row.FirstStarted, time.Now())
	if need := st.NeedCostUSD; raise.CostUSD > 0 && raise.CostUSD < need {
		hint := fmt.Sprintf("the run's next call needs a limit of at least $%.2f (what the run spent plus what that call may cost); resume with `--budget-usd %.2f` or more", need, need)
		if err != nil {
			err = fmt.Errorf("%w; %s", err, hint)
		} else {
			err = fmt.Errorf("budget.cost_usd $%.2f is too little: %s", raise.CostUSD, hint)
		}
	}
	if err != nil {
		return nil, configError{err}
	}
	st.NeedCostUSD = 0
	if nb == cur {
		return nil, nil // limits the run has already: no raise, nothing changes
	}
	st.Budget = &nb
	row.State = st.encode()
	ev := event.New(row.ID, "", 0, &event.BudgetRaised{From: budgetSpec(cur), To: budgetSpec(nb), Was: row.Outcome})
	return &ev, nil
}

func budgetSpec(b contract.Budget) event.BudgetSpec {
	s := event.BudgetSpec{Steps: b.Steps, Tokens: b.Tokens, CostUSD: b.CostUSD}
	if b.Wall > 0 {
		s.Wall = b.Wall.String()
	}
	return s
}
