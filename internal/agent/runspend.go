package agent

import (
	"fmt"
	"strings"
	"time"

	"github.com/ioh-lsp/ioh-lsp/internal/agent/contract"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/trace"
)

// Spend is what a run drew, its sub-agents included, against its limits:
// what `runs`, `runs --json` and `ioh.runs` show.
type Spend struct {
	Steps int
	// Tokens is what the token budget counts (uncached input, cache
	// writes, output); CacheReadTokens, not counted, beside it.
	Tokens          int64
	CacheReadTokens int64
	CostUSD         float64 // the priced calls' cost
	// Unpriced counts calls nothing could price; when it is not zero the
	// run's cost is unknown (CostUSD is only what the priced calls cost).
	Unpriced int
	// Limits are the run's budget (raised by a resume, if it was); a zero
	// field is unlimited.
	Limits contract.Budget
	// Elapsed is the wall time since the run first started, up to its
	// last update (what a wall limit measures).
	Elapsed time.Duration
}

// CostKnown reports whether every call of the run (and its sub-agents)
// was priced.
func (s Spend) CostKnown() bool { return s.Unpriced == 0 }

// Spends computes each run's spend, rolling every sub-agent's tokens,
// cost and unpriced calls into all of its ancestors present in rows.
func Spends(rows []*trace.RunRow) map[string]Spend {
	byID := make(map[string]*trace.RunRow, len(rows))
	for _, r := range rows {
		byID[r.ID] = r
	}
	out := make(map[string]Spend, len(rows))
	for _, r := range rows {
		lim, st, err := effectiveBudget(r)
		unpriced := 0
		if err == nil {
			unpriced = st.Unpriced
		}
		s := out[r.ID]
		s.Steps, s.Limits = r.Totals.Steps, lim
		if !r.Updated.IsZero() && !r.FirstStarted.IsZero() {
			s.Elapsed = r.Updated.Sub(r.FirstStarted)
		}
		out[r.ID] = s
		for id, depth := r.ID, 0; id != "" && depth < 64; depth++ {
			a := out[id]
			a.Tokens += r.Totals.Tokens()
			a.CacheReadTokens += r.Totals.CacheReadTokens
			a.CostUSD += r.Totals.CostUSD
			a.Unpriced += unpriced
			out[id] = a
			p, ok := byID[id]
			if !ok {
				break
			}
			id = p.Parent
		}
	}
	return out
}

// CostText renders a cost for people: "$0.0123", "unknown" when nothing
// was priced, ">= $0.0123" when some calls were not.
func (s Spend) CostText() string {
	switch {
	case s.CostKnown():
		return fmt.Sprintf("$%.4f", s.CostUSD)
	case s.CostUSD == 0:
		return "unknown"
	}
	return fmt.Sprintf(">= $%.4f", s.CostUSD)
}

// Against renders the spend against each limit the run has, such as
// "steps 3/40 · tokens 12045/400000 · $0.0123/$2.00 · wall 1m2s/15m0s";
// a dimension without a limit shows its spend alone.
func (s Spend) Against() string {
	var parts []string
	if s.Limits.Steps > 0 {
		parts = append(parts, fmt.Sprintf("steps %d/%d", s.Steps, s.Limits.Steps))
	} else {
		parts = append(parts, fmt.Sprintf("steps %d", s.Steps))
	}
	if s.Limits.Tokens > 0 {
		parts = append(parts, fmt.Sprintf("tokens %d/%d", s.Tokens, s.Limits.Tokens))
	} else {
		parts = append(parts, fmt.Sprintf("tokens %d", s.Tokens))
	}
	cost := s.CostText()
	if s.Limits.CostUSD > 0 {
		cost += fmt.Sprintf("/$%.2f", s.Limits.CostUSD)
	}
	parts = append(parts, cost)
	if s.Limits.Wall > 0 {
		parts = append(parts, fmt.Sprintf("wall %s/%s", s.Elapsed.Round(time.Second), s.Limits.Wall))
	}
	return strings.Join(parts, " · ")
}
