package acp

import (
	"context"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/ioh-lsp/ioh-lsp/internal/agent"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/contract"
)

// A run its budget stopped is answered in the panel: a permission
// request offers +50% and ×2 of the limit that stopped it (as the
// language server's "Continue with a larger budget"); a choice resumes
// the run with that budget in the same turn.

// raiseChoice is one answer offered to "how much more?".
type raiseChoice struct {
	id, title string
	raise     contract.Budget
}

// stoppedBy reads what stopped run id: its spend against its limits and
// the limit that ran out ("" when its error names none).
func (ss *session) stoppedBy(ctx context.Context, id string) (agent.Spend, agent.Limit, string, error) {
	row, err := ss.eng.Store.Run(ctx, id)
	if err != nil {
		return agent.Spend{}, "", "", err
	}
	rows, err := ss.eng.Store.Tree(ctx, id)
	if err != nil {
		return agent.Spend{}, "", "", err
	}
	return agent.Spends(rows)[id], agent.ExceededLimit(row.Error), row.Error, nil
}

// raiseChoices offers +50% and ×2 of the limit that stopped the run (of
// every limit it has when the error does not say which). Wall time runs
// from the first start, so a wall raise adds the extra time to what is
// already spent.
func raiseChoices(sp agent.Spend, limit agent.Limit) []raiseChoice {
	var out []raiseChoice
	for i, f := range []struct {
		label  string
		factor float64
	}{{"+50%", 1.5}, {"×2", 2}} {
		b := sp.Limits
		var raise contract.Budget
		var what []string
		all := limit == ""
		if (all || limit == agent.LimitSteps) && b.Steps > 0 {
			raise.Steps = int(math.Ceil(float64(b.Steps) * f.factor))
			what = append(what, fmt.Sprintf("%d steps", raise.Steps))
		}
		if (all || limit == agent.LimitTokens) && b.Tokens > 0 {
			raise.Tokens = int64(math.Ceil(float64(b.Tokens) * f.factor))
			what = append(what, fmt.Sprintf("%d tokens", raise.Tokens))
		}
		if (all || limit == agent.LimitCost) && b.CostUSD > 0 {
			raise.CostUSD = math.Ceil(b.CostUSD*f.factor*100) / 100
			what = append(what, fmt.Sprintf("$%.2f", raise.CostUSD))
		}
		if (all || limit == agent.LimitWall) && b.Wall > 0 {
			extra := time.Duration(float64(b.Wall) * (f.factor - 1))
			raise.Wall = max(time.Duration(float64(b.Wall)*f.factor), sp.Elapsed+extra).Round(time.Second)
			what = append(what, fmt.Sprintf("%s wall (%s more)", raise.Wall, extra.Round(time.Second)))
		}
		if len(what) > 0 {
			out = append(out, raiseChoice{id: fmt.Sprintf("raise-%d", i+1), title: fmt.Sprintf("Continue with %s: %s", f.label, strings.Join(what, ", ")), raise: raise})
		}
	}
	return out
}

// resumeFlags is the CLI's way on for the limit that stopped run id:
// the --budget-* flag of that limit only (a step budget is raised with
// --budget-steps, never with the token or dollar flags).
func resumeFlags(id string, limit agent.Limit) string {
	flag := map[agent.Limit]string{
		agent.LimitSteps: "--budget-steps N", agent.LimitTokens: "--budget-tokens N",
		agent.LimitCost: "--budget-usd X", agent.LimitWall: "--budget-wall D",
	}[limit]
	if flag == "" {
		return fmt.Sprintf("`ioh-lsp resume %s` with the --budget-* flag of the limit that ran out (`ioh-lsp trace %s` names it)", id, id)
	}
	return fmt.Sprintf("`ioh-lsp resume %s %s`", id, flag)
}

// offerRaise asks whether the run res reports, stopped by its budget,
// goes on with a larger one; ok is false when the user declines, nothing
// can be raised, or the request fails (the message says how to go on).
func (ss *session) offerRaise(ctx context.Context, res *agent.Result) (*agent.Result, bool) {
	id := res.RunID
	sp, limit, why, err := ss.stoppedBy(ctx, id)
	if err != nil {
		ss.say(fmt.Sprintf("Run %s stopped at its budget; reading its spend failed (%v): /resume after raising it from the CLI.", id, err))
		return nil, false
	}
	choices := raiseChoices(sp, limit)
	if len(choices) == 0 {
		return nil, false
	}
	opts := make([]permissionOption, 0, len(choices)+1)
	for _, c := range choices {
		opts = append(opts, permissionOption{OptionID: c.id, Name: c.title, Kind: "allow_once"})
	}
	opts = append(opts, permissionOption{OptionID: optRejectOnce, Name: "Stop here", Kind: "reject_once"})
	tc := toolCall{SessionUpdate: "tool_call", ToolCallID: fmt.Sprintf("%s/budget-%d", id, sp.Steps), Kind: kindOther, Status: statusPending,
		Title:   fmt.Sprintf("Run %s stopped: %s (%s). Continue with a larger budget?", id, oneLine(why), sp.Against()),
		Content: []toolCallContent{textContent("The run resumes from its last step with the budget you choose; nothing it did is repeated or charged twice.")},
		Meta:    map[string]any{"ioh": map[string]any{"run": id, "limit": string(limit)}}}
	ss.update(tc)
	choice, err := approver{ss}.ask(ctx, tc, opts)
	if err != nil {
		ss.update(toolCall{SessionUpdate: "tool_call_update", ToolCallID: tc.ToolCallID, Status: statusFailed})
		return nil, false
	}
	for _, c := range choices {
		if c.id != choice {
			continue
		}
		ss.update(toolCall{SessionUpdate: "tool_call_update", ToolCallID: tc.ToolCallID, Status: statusCompleted,
			Content: []toolCallContent{textContent(c.title + ": resumed.")}})
		run, err := ss.eng.Harness.ResumeWith(ctx, id, c.raise)
		if err != nil {
			ss.say(fmt.Sprintf("Run %s did not resume: %v. %s continues it from the CLI.", id, err, resumeFlags(id, limit)))
			return nil, false
		}
		return run.Wait(), true
	}
	ss.update(toolCall{SessionUpdate: "tool_call_update", ToolCallID: tc.ToolCallID, Status: statusFailed,
		Content: []toolCallContent{textContent(fmt.Sprintf("Stopped here. /resume does not raise a budget; %s continues it later.", resumeFlags(id, limit)))}})
	return nil, false
}

func oneLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	if len(s) > 160 {
		s = s[:157] + "…"
	}
	return s
}
