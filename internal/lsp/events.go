package lsp

import (
	"fmt"
	"strings"
	"time"

	"go.lsp.dev/protocol"

	"github.com/ioh-lsp/ioh-lsp/internal/agent"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/event"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/verify"
)

// sink receives the agent's events (from the run's goroutine, so it only
// records and queues; it never waits on the client). Each engine has its
// own, naming its folder: events can arrive before Start returns the id.
type sink struct {
	s      *Server
	folder string
}

// Emit records e on its run and queues a progress report.
func (k sink) Emit(e event.Event) {
	if event.Transient(e.Type) {
		return // streamed text: the model_turn that follows holds it whole
	}
	s := k.s
	report := false
	s.runs.with(e.Run, func(st *runState) {
		if st.folder == "" {
			st.folder = k.folder
		}
		st.events = append(st.events, e)
		if e.Step > st.steps {
			st.steps = e.Step
		}
		switch p := e.Payload.(type) {
		case *event.RunStarted:
			if st.goal == "" {
				st.goal = p.Goal
			}
		case *event.ToolCall:
			st.tool = p.Tool
			report = true
		case *event.CheckRun:
			st.tool = verificationNote(p)
			report = true
		case *event.Budget:
			// Running totals, never a call's own figures: events of
			// parallel sub-agents may arrive out of order, and totals only
			// grow, so the largest seen is the latest.
			if e.Parent == "" {
				spendFrom(st, p.RootTokens, p.RootCostUSD, p.RootCostKnown && p.CostUSD != nil)
			} else {
				spendFrom(st, p.RunTokens, p.RunCostUSD, p.CostUSD != nil)
			}
			limitsFrom(st, p.Limits())
			st.cached = max(st.cached, p.RunCacheReadTokens)
			report = true
		case *event.Outcome:
			// A sub-agent's end (a root run's comes with its result); a
			// later one (a resume closing what a crash left in flight)
			// wins.
			if e.Parent != "" {
				st.outcome = agent.Outcome(p.Outcome)
			}
		}
	})
	if b, ok := e.Payload.(*event.Budget); ok && e.Parent != "" && b.RootRun != "" {
		// A sub-agent's draw is the whole tree's spend too: the root's
		// progress shows it while the root waits.
		s.runs.with(b.RootRun, func(st *runState) { spendFrom(st, b.RootTokens, b.RootCostUSD, b.RootCostKnown) })
		s.progressReport(b.RootRun)
	}
	if p, ok := e.Payload.(*event.Policy); ok {
		s.onPolicy(e.Run, e.Step, p)
	}
	if c, ok := e.Payload.(*event.CheckRun); ok && e.Step == 0 && c.Phase == verify.PhaseRed && c.Preflight != "" {
		// a check that cannot run, found before the first model call (step
		// 0: the red phase of redFirst), read from its verification event
		s.showMessage(protocol.MessageTypeWarning, fmt.Sprintf("ioh run %s: preflight: %s", e.Run, c.Preflight))
	}
	if report {
		s.progressReport(e.Run)
	}
}

// spendFrom raises st's running totals to a budget event's; known false
// (a call could not be priced) makes the cost unknown for good.
func spendFrom(st *runState, tokens int64, cost float64, known bool) {
	st.tokens = max(st.tokens, tokens)
	st.cost = max(st.cost, cost)
	if !known {
		st.unpriced = true
	}
}

// limitsFrom records the limits a budget event names.
func limitsFrom(st *runState, l event.BudgetLimits) {
	if l == (event.BudgetLimits{}) {
		return
	}
	st.limits.Steps, st.limits.Tokens, st.limits.CostUSD = l.LimitSteps, l.LimitTokens, l.LimitCostUSD
	if w, err := time.ParseDuration(l.LimitWall); err == nil {
		st.limits.Wall = w
	}
}

// verificationNote describes one check's sandboxed result.
func verificationNote(c *event.CheckRun) string {
	verdict := "FAILED"
	if c.Passed {
		verdict = "passed"
	}
	note := fmt.Sprintf("sandboxed check %q %s", c.Check, verdict)
	if c.Phase == "red" {
		note += " on the unchanged tree"
	}
	extra := []string{fmt.Sprintf("exit %d", c.ExitCode), fmt.Sprintf("%.1fs", float64(c.DurationMS)/1000)}
	if c.Backend != "" {
		extra = append([]string{"backend " + c.Backend}, extra...)
	}
	return note + " (" + strings.Join(extra, ", ") + ")"
}
