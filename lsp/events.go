package lsp

import (
	"fmt"
	"strings"

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
		case trace.EventModelTurn, trace.EventBudget:
			in, _ := fieldInt(e.Fields, "input_tokens")
			out, _ := fieldInt(e.Fields, "output_tokens")
			if e.Type == trace.EventModelTurn && (in > 0 || out > 0) {
				st.tokens += in + out
			}
			if c, ok := fieldFloat(e.Fields, "cost_usd", "spent_usd"); ok && c > st.cost {
				st.cost = c
			}
			if t, ok := fieldInt(e.Fields, "tokens", "spent_tokens"); ok && e.Type == trace.EventBudget && t > st.tokens {
				st.tokens = t
			}
			report = true
		}
	})
	if e.Type == trace.EventPolicy {
		s.onPolicy(e)
	}
	if report {
		s.progressReport(e.Run)
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
