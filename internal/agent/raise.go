package agent

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/ioh-lsp/ioh-lsp/internal/agent/contract"
)

// RaiseChoice is one answer a front end offers to "how much more?" for a
// run its budget stopped: Label ("+50%", "×2"), What it raises ("60
// steps", "$3.00", "45m0s wall (15m0s more)") and the Raise to resume
// with (ResumeWith).
type RaiseChoice struct {
	Label, What string
	Raise       contract.Budget
}

// Title is the choice as one line: "+50%: 60 steps".
func (c RaiseChoice) Title() string { return c.Label + ": " + c.What }

// RaiseChoices offers +50% and ×2 of limit, the limit that stopped a run
// spending sp (of every limit it has when limit is ""); none when the run
// has no such limit. Wall time runs from the first start, so a wall raise
// adds the extra time to what is already spent. The language server, the
// ACP agent and the CLI's hint all offer these.
func RaiseChoices(sp Spend, limit Limit) []RaiseChoice {
	var out []RaiseChoice
	for _, f := range []struct {
		label  string
		factor float64
	}{{"+50%", 1.5}, {"×2", 2}} {
		if c, ok := raiseBy(sp, limit, f.factor); ok {
			c.Label = f.label
			out = append(out, c)
		}
	}
	return out
}

// raiseBy is the choice that multiplies limit (every limit when "") by
// factor; ok is false when the run has none of them.
func raiseBy(sp Spend, limit Limit, factor float64) (RaiseChoice, bool) {
	b := sp.Limits
	var raise contract.Budget
	var what []string
	all := limit == ""
	if (all || limit == LimitSteps) && b.Steps > 0 {
		raise.Steps = int(math.Ceil(float64(b.Steps) * factor))
		what = append(what, fmt.Sprintf("%d steps", raise.Steps))
	}
	if (all || limit == LimitTokens) && b.Tokens > 0 {
		raise.Tokens = int64(math.Ceil(float64(b.Tokens) * factor))
		what = append(what, fmt.Sprintf("%d tokens", raise.Tokens))
	}
	if (all || limit == LimitCost) && b.CostUSD > 0 {
		raise.CostUSD = math.Ceil(b.CostUSD*factor*100) / 100
		what = append(what, fmt.Sprintf("$%.2f", raise.CostUSD))
	}
	if (all || limit == LimitWall) && b.Wall > 0 {
		extra := time.Duration(float64(b.Wall) * (factor - 1))
		raise.Wall = max(time.Duration(float64(b.Wall)*factor), sp.Elapsed+extra).Round(time.Second)
		what = append(what, fmt.Sprintf("%s wall (%s more)", raise.Wall, extra.Round(time.Second)))
	}
	return RaiseChoice{What: strings.Join(what, ", "), Raise: raise}, len(what) > 0
}

// ResumeFlag is the `ioh-lsp resume` flag that raises limit
// (docs/cli.md#resume): "--budget-steps N", "--budget-tokens N",
// "--budget-usd X", "--budget-wall D"; "" for no limit.
func ResumeFlag(limit Limit) string {
	switch limit {
	case LimitSteps:
		return "--budget-steps N"
	case LimitTokens:
		return "--budget-tokens N"
	case LimitCost:
		return "--budget-usd X"
	case LimitWall:
		return "--budget-wall D"
	}
	return ""
}
