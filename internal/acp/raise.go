package acp

import (
	"context"
	"fmt"
	"strings"

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

// stoppedBy reads what stopped run id from the engine's history: its
// spend against its limits, the limit that ran out (the one the run
// recorded, "" when it names none) and its error.
func (ss *session) stoppedBy(ctx context.Context, id string) (agent.Spend, agent.Limit, string, error) {
	r, err := ss.eng.Harness.History().Run(ctx, id)
	if err != nil {
		return agent.Spend{}, "", "", err
	}
	why := ""
	if r.Err != nil {
		why = r.Err.Error()
	}
	return r.Spend, r.StopLimit(), why, nil
}

// raiseChoices are the engine's answers (agent.RaiseChoices) as
// permission options.
func raiseChoices(sp agent.Spend, limit agent.Limit) []raiseChoice {
	var out []raiseChoice
	for i, c := range agent.RaiseChoices(sp, limit) {
		out = append(out, raiseChoice{id: fmt.Sprintf("raise-%d", i+1), title: "Continue with " + c.Title(), raise: c.Raise})
	}
	return out
}

// resumeFlags is the CLI's way on for the limit that stopped run id:
// the --budget-* flag of that limit only (a step budget is raised with
// --budget-steps, never with the token or dollar flags).
func resumeFlags(id string, limit agent.Limit) string {
	flag := agent.ResumeFlag(limit)
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
