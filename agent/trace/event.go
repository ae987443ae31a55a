// Package trace is the durable record of runs: one SQLite database per
// workspace under the state directory (docs/trace.md), each step committed in one
// transaction, leases so two processes never drive one run, and the typed
// events the agent emits to sinks (CLI, language server) and stores.
package trace

import (
	"encoding/json"
	"time"
)

// Event is one thing that happened in a run. Fields holds the event's own
// fields; MarshalJSON flattens them next to run, step and type, which is the
// JSON Lines shape of `ioh-lsp trace --json` (docs/trace-json.md).
type Event struct {
	Run    string         `json:"run"`
	Parent string         `json:"parent,omitempty"`
	Step   int            `json:"step"`
	Type   string         `json:"type"`
	Time   time.Time      `json:"time"`
	Fields map[string]any `json:"-"`
}

// Event types.
const (
	EventRunStarted   = "run_started"
	EventModelTurn    = "model_turn"
	EventToolCall     = "tool_call"
	EventToolResult   = "tool_result"
	EventPolicy       = "policy"
	EventBudget       = "budget"
	EventRetry        = "retry"
	EventVerification = "verification"
	EventProposal     = "proposal"
	EventApproval     = "approval"
	EventAgentSpawned = "agent_spawned"
	EventOutcome      = "outcome"
)

// MarshalJSON writes the event as one flat object.
func (e Event) MarshalJSON() ([]byte, error) {
	m := make(map[string]any, len(e.Fields)+5)
	for k, v := range e.Fields {
		m[k] = v
	}
	m["run"] = e.Run
	m["step"] = e.Step
	m["type"] = e.Type
	m["time"] = e.Time.UTC().Format(time.RFC3339Nano)
	if e.Parent != "" {
		m["parent"] = e.Parent
	}
	return json.Marshal(m)
}

// UnmarshalJSON reads the flat form back.
func (e *Event) UnmarshalJSON(b []byte) error {
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return err
	}
	*e = Event{Fields: map[string]any{}}
	for k, v := range m {
		switch k {
		case "run":
			e.Run, _ = v.(string)
		case "parent":
			e.Parent, _ = v.(string)
		case "step":
			if f, ok := v.(float64); ok {
				e.Step = int(f)
			}
		case "type":
			e.Type, _ = v.(string)
		case "time":
			if s, ok := v.(string); ok {
				e.Time, _ = time.Parse(time.RFC3339Nano, s)
			}
		default:
			e.Fields[k] = v
		}
	}
	return nil
}

// Sink receives events as they happen. Emit must not block for long; it is
// called from the run's goroutine.
type Sink interface {
	Emit(Event)
}

// SinkFunc adapts a function to Sink.
type SinkFunc func(Event)

// Emit calls f.
func (f SinkFunc) Emit(e Event) { f(e) }
