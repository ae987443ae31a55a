package lsp

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"go.lsp.dev/protocol"

	"github.com/ioh-lsp/ioh-lsp/internal/agent"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/contract"
)

// A run its budget stopped can continue with a larger budget: ioh.resume
// {runId, budget} raises the limits it names; without a budget the server
// asks how much more with window/showMessageRequest (+50%, ×2). The task
// file of such a run gets a Warning `budget-exceeded` with that quick fix,
// and a code lens.

// continueTitle names the action everywhere it is offered.
const continueTitle = "Continue with a larger budget"

// budgetRaise is ioh.resume's budget argument: {steps, tokens, cost_usd,
// wall} (wall a Go duration such as "30m"), each optional.
type budgetRaise struct {
	Steps   int     `json:"steps"`
	Tokens  int64   `json:"tokens"`
	CostUSD float64 `json:"cost_usd"`
	Wall    string  `json:"wall"`
}

func (b budgetRaise) budget() (contract.Budget, error) {
	out := contract.Budget{Steps: b.Steps, Tokens: b.Tokens, CostUSD: b.CostUSD}
	if b.Wall != "" {
		w, err := time.ParseDuration(b.Wall)
		if err != nil {
			return out, fmt.Errorf("budget.wall: %w", err)
		}
		out.Wall = w
	}
	if out == (contract.Budget{}) {
		return out, errors.New("budget: name at least one of steps, tokens, cost_usd, wall")
	}
	return out, nil
}

// stoppedRun is what the server knows of a run its budget stopped: its
// spend against its limits and the limit it hit.
type stoppedRun struct {
	spend agent.Spend
	limit agent.Limit
	err   string
}

// budgetStopped reads run id from the engine's history: ok is false
// unless it ended budget_exceeded. The limit is the run's recorded stop
// limit (agent.StoredRun.StopLimit), never read from its error text.
func (s *Server) budgetStopped(ctx context.Context, id string) (stoppedRun, bool) {
	eng, err := s.engineOf(ctx, id)
	if err != nil || eng.history() == nil {
		return stoppedRun{}, false
	}
	r, err := eng.history().Run(ctx, id)
	if err != nil || r.Outcome != agent.OutcomeBudgetExceeded {
		return stoppedRun{}, false
	}
	why := ""
	if r.Err != nil {
		why = r.Err.Error()
	}
	return stoppedRun{spend: r.Spend, limit: r.StopLimit(), err: why}, true
}

// raiseChoice is one answer offered to "how much more?".
type raiseChoice struct {
	title string
	raise contract.Budget
}

// raiseChoices are the engine's answers for r (agent.RaiseChoices).
func raiseChoices(r stoppedRun) []raiseChoice {
	var out []raiseChoice
	for _, c := range agent.RaiseChoices(r.spend, r.limit) {
		out = append(out, raiseChoice{title: c.Title(), raise: c.Raise})
	}
	return out
}

// notNow declines the question.
const notNow = "Not now"

// askRaise asks the user how much larger the budget of a run its budget
// stopped should be. asked is false for any other run (it is resumed as
// it is); a zero raise with asked true means the user declined.
func (s *Server) askRaise(ctx context.Context, id string) (raise contract.Budget, asked bool, err error) {
	stopped, ok := s.budgetStopped(ctx, id)
	if !ok {
		return contract.Budget{}, false, nil
	}
	choices := raiseChoices(stopped)
	if len(choices) == 0 {
		return contract.Budget{}, false, nil
	}
	actions := make([]protocol.MessageActionItem, 0, len(choices)+1)
	for _, c := range choices {
		actions = append(actions, protocol.MessageActionItem{Title: c.title})
	}
	actions = append(actions, protocol.MessageActionItem{Title: notNow})
	msg := fmt.Sprintf("Run %s stopped: %s (%s). %s?", id, oneLine(stopped.err, 120), stopped.spend.Against(), continueTitle)
	ans, err := s.client.ShowMessageRequest(ctx, &protocol.ShowMessageRequestParams{Type: protocol.MessageTypeWarning, Message: msg, Actions: actions})
	if err != nil {
		return contract.Budget{}, true, fmt.Errorf("ask for a larger budget: %w", err)
	}
	if ans != nil {
		for _, c := range choices {
			if c.title == ans.Title {
				return c.raise, true, nil
			}
		}
	}
	return contract.Budget{}, true, nil
}

// publishBudgetStop puts a Warning `budget-exceeded` on the task file of a
// run its budget stopped, at its budget line, offering to continue.
func (s *Server) publishBudgetStop(id string, res *agent.Result) {
	st, _ := s.runs.lookup(id)
	if res == nil || res.Outcome != agent.OutcomeBudgetExceeded || st.contract == nil || !filepath.IsAbs(st.contract.Path) {
		return
	}
	abs := st.contract.Path
	text := s.fileText(abs)
	line := 1
	for i, l := range strings.Split(string(text), "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "budget:") {
			line = i + 1
			break
		}
	}
	why := "its budget ran out"
	if res.Err != nil {
		why = oneLine(res.Err.Error(), 160)
	}
	msg := fmt.Sprintf("run %s stopped: %s (%s) — %s", id, why, progressText(st), continueTitle)
	s.setDiags(id, kindBudget, []diagEntry{{abs, newDiag(lineRange(text, line), protocol.DiagnosticSeverityWarning, msg,
		diagData{RunID: id, Kind: kindBudget}, codeBudgetExceed)}})
}

// budgetLenses lists the runs of task file abs its budget stopped, seen in
// this session or recorded in the folder's trace.
func (s *Server) budgetLenses(ctx context.Context, folder, abs string) []string {
	var ids []string
	seen := map[string]bool{}
	for _, st := range s.runs.list() {
		if st.contract != nil && st.contract.Path == abs && st.outcome == agent.OutcomeBudgetExceeded {
			ids = append(ids, st.id)
		}
		seen[st.id] = true
	}
	eng, err := s.engine(ctx, folder)
	if err != nil || eng.history() == nil {
		return ids
	}
	runs, err := eng.history().Runs(ctx)
	if err != nil {
		return ids
	}
	for _, r := range runs {
		if r.Parent == "" && !seen[r.RunID] && r.Outcome == agent.OutcomeBudgetExceeded && r.ContractPath == abs {
			ids = append(ids, r.RunID)
		}
	}
	return ids
}
