package lsp

import (
	"fmt"
	"strings"
	"time"

	"github.com/ioh-lsp/ioh-lsp/agent/trace"
)

// sink receives the agent's events (from the run's goroutine, so it only
// records and queues; it never waits on the client). Each engine has its
// own, naming its folder: events can arrive before Start returns the id.
type sink struct {
	s      *Server
	folder string
}

// Emit records e on its run and queues a progress report.
func (k sink) Emit(e trace.Event) {
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
		switch e.Type {
		case trace.EventRunStarted:
			if g, ok := e.Fields["goal"].(string); ok && st.goal == "" {
				st.goal = g
			}
		case trace.EventToolCall:
			st.tool = fieldString(e.Fields, "tool", "name")
			report = true
		case trace.EventVerification:
			if check := fieldString(e.Fields, "check"); check != "" {
				st.tool = verificationNote(check, e.Fields)
				report = true
			}
		case trace.EventBudget:
			// Running totals, never a call's own figures: events of
			// parallel sub-agents may arrive out of order, and totals only
			// grow, so the largest seen is the latest.
			if e.Parent == "" {
				spendFrom(st, e.Fields, "root_tokens", "root_cost_usd", "root_cost_known")
			} else {
				spendFrom(st, e.Fields, "run_tokens", "run_cost_usd", "")
			}
			limitsFrom(st, e.Fields)
			report = true
		}
	})
	root := fieldString(e.Fields, "root_run")
	if e.Type == trace.EventBudget && e.Parent != "" && root != "" {
		// A sub-agent's draw is the whole tree's spend too: the root's
		// progress shows it while the root waits.
		s.runs.with(root, func(st *runState) { spendFrom(st, e.Fields, "root_tokens", "root_cost_usd", "root_cost_known") })
		s.progressReport(root)
	}
	if e.Type == trace.EventPolicy {
		s.onPolicy(e)
	}
	if report {
		s.progressReport(e.Run)
	}
}

// spendFrom raises st's running totals to a budget event's (tokens and
// cost keys); known names the flag saying every call was priced.
func spendFrom(st *runState, f map[string]any, tokens, cost, known string) {
	if t, ok := fieldInt(f, tokens); ok && t > st.tokens {
		st.tokens = t
	}
	if c, ok := fieldFloat(f, cost); ok && c > st.cost {
		st.cost = c
	}
	if k, ok := f[known].(bool); ok && !k {
		st.unpriced = true
	}
	if f["cost_source"] == "unknown" {
		st.unpriced = true
	}
}

// limitsFrom records the limits a budget event names.
func limitsFrom(st *runState, f map[string]any) {
	if n, ok := fieldInt(f, "limit_steps"); ok {
		st.limits.Steps = int(n)
	}
	if n, ok := fieldInt(f, "limit_tokens"); ok {
		st.limits.Tokens = n
	}
	if c, ok := fieldFloat(f, "limit_cost_usd"); ok {
		st.limits.CostUSD = c
	}
	if w, err := time.ParseDuration(fieldString(f, "limit_wall")); err == nil {
		st.limits.Wall = w
	}
}

// verificationNote describes one check's sandboxed result.
func verificationNote(check string, f map[string]any) string {
	verdict := "FAILED"
	if p, _ := f["passed"].(bool); p {
		verdict = "passed"
	}
	note := fmt.Sprintf("sandboxed check %q %s", check, verdict)
	if phase := fieldString(f, "phase"); phase == "red" {
		note += " on the unchanged tree"
	}
	var extra []string
	if b := fieldString(f, "backend"); b != "" {
		extra = append(extra, "backend "+b)
	}
	if code, ok := fieldInt(f, "exit_code"); ok {
		extra = append(extra, fmt.Sprintf("exit %d", code))
	}
	if ms, ok := fieldInt(f, "duration_ms"); ok {
		extra = append(extra, fmt.Sprintf("%.1fs", float64(ms)/1000))
	}
	if len(extra) > 0 {
		note += " (" + strings.Join(extra, ", ") + ")"
	}
	return note
}

// fieldString returns the first string field among keys.
func fieldString(f map[string]any, keys ...string) string {
	for _, k := range keys {
		if v, ok := f[k].(string); ok {
			return v
		}
	}
	return ""
}

// fieldInt returns the first numeric field among keys.
func fieldInt(f map[string]any, keys ...string) (int64, bool) {
	for _, k := range keys {
		switch v := f[k].(type) {
		case int:
			return int64(v), true
		case int64:
			return v, true
		case float64:
			return int64(v), true
		}
	}
	return 0, false
}

// fieldFloat returns the first float field among keys.
func fieldFloat(f map[string]any, keys ...string) (float64, bool) {
	for _, k := range keys {
		switch v := f[k].(type) {
		case float64:
			return v, true
		case int:
			return float64(v), true
		case int64:
			return float64(v), true
		}
	}
	return 0, false
}
