// Package render is the one renderer of events for people: `ioh-lsp
// trace` (Line), the language server's markdown trace (Markdown) and the
// progress lines of `ioh-lsp run` (Headline) all go through here, and
// every field shown is written by the same encoding as the JSON Lines
// (event.Event.Fields). It reads events only: it imports package event
// and nothing of the store.
package render

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/ioh-lsp/ioh-lsp/internal/agent/event"
)

// FieldsText renders e's own fields as "key=value" pairs sorted by key,
// each JSON value on one line and cut at max bytes.
func FieldsText(e event.Event, max int) string {
	fields, err := e.Fields()
	if err != nil {
		return "(" + err.Error() + ")"
	}
	parts := make([]string, 0, len(fields))
	for _, f := range fields {
		parts = append(parts, f.Key+"="+OneLine(string(f.Value), max))
	}
	return strings.Join(parts, " ")
}

// Line renders e on one line: time, run, step, type and its fields.
func Line(e event.Event) string {
	s := fmt.Sprintf("%s %s step %d %-13s", e.Time.UTC().Format("15:04:05.000"), e.Run, e.Step, e.Type)
	if f := FieldsText(e, 160); f != "" {
		s += " " + f
	}
	return s
}

// Markdown renders events as markdown: a section per step, an item per
// event with its fields.
func Markdown(events []event.Event) string {
	var b strings.Builder
	step := -1
	for _, e := range events {
		if e.Step != step {
			step = e.Step
			fmt.Fprintf(&b, "\n## step %d\n\n", step)
		}
		fmt.Fprintf(&b, "- **%s**", e.Type)
		if f := FieldsText(e, 200); f != "" {
			b.WriteString(": " + f)
		}
		b.WriteString("\n")
	}
	return b.String()
}

// Headline says in a few words what e means to a person watching a run
// ("" for events not worth a line): the model's text, the calls, what
// failed or was denied, each check's verdict, sub-agents.
func Headline(e event.Event) string {
	who := who(e)
	switch p := e.Payload.(type) {
	case *event.ModelTurn:
		if text := strings.TrimSpace(p.Text); text != "" {
			return StepPrefix(e) + OneLine(text, 200)
		}
	case *event.ToolCall:
		return StepPrefix(e) + p.Tool + " " + OneLine(p.Arguments, 120)
	case *event.ToolResult:
		if p.IsError {
			first, _, _ := strings.Cut(p.Content, "\n")
			return fmt.Sprintf("%s  ! %s: %s", who, p.Tool, first)
		}
	case *event.Policy:
		if p.Effect != "allow" {
			return fmt.Sprintf("%s  policy: %s %s %s (layer %s %s)", who, p.Effect, p.Act, p.Target, p.Layer, p.Rule)
		}
	case *event.CheckRun:
		state := "failed"
		if p.Passed {
			state = "passed"
		}
		line := fmt.Sprintf("%sverify: %s (%s) %s", who, p.Check, p.Phase, state)
		if p.Evidence != "" {
			line += " [" + p.Evidence + "]"
		}
		if len(p.Problems) > 0 {
			line += ": " + strings.Join(p.Problems, "; ")
		}
		for _, l := range p.Locations {
			if l.Test != "" { // the first failing test at its own place
				line += fmt.Sprintf("; %s at %s:%d: %s", l.Test, l.Path, l.Line, OneLine(l.Message, 160))
				break
			}
		}
		if len(p.Flaky) > 0 {
			line += "; " + strings.Join(p.Flaky, ", ") + " failed, then passed on rerun: flaky"
		}
		if p.Preflight != "" {
			first, _, _ := strings.Cut(p.Preflight, "\n")
			line += ": " + OneLine(first, 240)
		}
		return line
	case *event.AgentSpawned:
		return fmt.Sprintf("%sspawned %s: %s", who, p.Child, p.Goal)
	case *event.Retry:
		if a := p.RetryAttempt; a != nil {
			if a.Next != "" {
				return fmt.Sprintf("%sretry: %s failed (attempt %d, %s): %s; falling back to %s", who, a.Provider, a.Attempt, p.Class, OneLine(a.Error, 160), a.Next)
			}
			return fmt.Sprintf("%sretry: retrying in %s (attempt %d, %s): %s", who, waitText(a.DelayMS), a.Attempt+1, p.Class, OneLine(a.Error, 160))
		}
		return fmt.Sprintf("%sretry: %s %s", who, p.Class, p.Action)
	case *event.Outcome:
		if e.Parent != "" {
			return fmt.Sprintf("%ssub-agent ended: %s", who, p.Outcome)
		}
	case *event.NetConn:
		return who + "  " + p.Headline() // event/payload_net.go
	}
	return ""
}

// who is what a sub-agent's lines start with ("  [r-…] "); "" for a
// root run's.
func who(e event.Event) string {
	if e.Parent != "" {
		return "  [" + e.Run + "] "
	}
	return ""
}

// StepPrefix is what a line of e's step starts with, as Headline writes
// it ("step 3: ", "  [r-…] step 2: "): streamed text goes behind it.
func StepPrefix(e event.Event) string { return fmt.Sprintf("%sstep %d: ", who(e), e.Step) }

// waitText is a retry's wait as a person reads it: "250 ms", "2.0 s".
func waitText(ms int64) string {
	if ms < 1000 {
		return fmt.Sprintf("%d ms", ms)
	}
	return fmt.Sprintf("%.1f s", float64(ms)/1000)
}

// OneLine puts s on one line and cuts it at max bytes (on a character
// boundary), marking the cut with "…".
func OneLine(s string, max int) string {
	s = strings.ReplaceAll(s, "\n", " ")
	if len(s) <= max {
		return s
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}
