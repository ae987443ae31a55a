package api_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/ioh-lsp/ioh-lsp/internal/agent/contract"
	"github.com/ioh-lsp/ioh-lsp/internal/lsp/api"
)

// decoders reaches every command's Decode by name.
var decoders = map[string]func(json.RawMessage) error{}

func init() {
	add := func(name string, f func(json.RawMessage) error) { decoders[name] = f }
	add(api.Run.Name, func(r json.RawMessage) error { _, err := api.Run.Decode(r); return err })
	add(api.Ask.Name, func(r json.RawMessage) error { _, err := api.Ask.Decode(r); return err })
	add(api.Approve.Name, func(r json.RawMessage) error { _, err := api.Approve.Decode(r); return err })
	add(api.Reject.Name, func(r json.RawMessage) error { _, err := api.Reject.Decode(r); return err })
	add(api.Cancel.Name, func(r json.RawMessage) error { _, err := api.Cancel.Decode(r); return err })
	add(api.Resume.Name, func(r json.RawMessage) error { _, err := api.Resume.Decode(r); return err })
	add(api.Trace.Name, func(r json.RawMessage) error { _, err := api.Trace.Decode(r); return err })
	add(api.Runs.Name, func(r json.RawMessage) error { _, err := api.Runs.Decode(r); return err })
	add(api.ClearTrace.Name, func(r json.RawMessage) error { _, err := api.ClearTrace.Decode(r); return err })
	add(api.ShowDiff.Name, func(r json.RawMessage) error { _, err := api.ShowDiff.Decode(r); return err })
	add(api.AllowOnce.Name, func(r json.RawMessage) error { _, err := api.AllowOnce.Decode(r); return err })
}

func TestEveryCommandIsDeclaredOnce(t *testing.T) {
	seen := map[string]bool{}
	for _, c := range api.All {
		if seen[c.Name] {
			t.Errorf("%s is declared twice", c.Name)
		}
		seen[c.Name] = true
		if !strings.HasPrefix(c.Name, "ioh.") || c.Doc == "" {
			t.Errorf("%s: want an ioh.* name and a doc, got %+v", c.Name, c)
		}
		if decoders[c.Name] == nil {
			t.Errorf("%s has no decoder in this test", c.Name)
		}
	}
	// The names are public interface (docs/lsp.md#commands): none may
	// change or go missing.
	want := []string{"ioh.run", "ioh.ask", "ioh.approve", "ioh.reject", "ioh.cancel", "ioh.resume",
		"ioh.trace", "ioh.runs", "ioh.clearTrace", "ioh.showDiff", "ioh.allowOnce"}
	if got := api.Names(); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("Names() = %v, want %v", got, want)
	}
}

// TestArgumentErrorsNameTheCommandAndField: each refused argument is an
// *ArgError whose message names the command and the field at fault.
func TestArgumentErrorsNameTheCommandAndField(t *testing.T) {
	cases := []struct {
		cmd, arg string
		want     string // substring of the message
		field    string
	}{
		{"ioh.approve", ``, `ioh.approve: field "runId": missing`, "runId"},
		{"ioh.approve", `null`, `ioh.approve: field "runId": missing`, "runId"},
		{"ioh.approve", `{}`, `ioh.approve: field "runId": missing`, "runId"},
		{"ioh.approve", `{"runId": ""}`, `ioh.approve: field "runId": must not be ""`, "runId"},
		{"ioh.approve", `{"runId": null}`, `ioh.approve: field "runId": must not be null`, "runId"},
		{"ioh.approve", `{"runId": 5}`, `ioh.approve: field "runId": want a string, got number`, "runId"},
		{"ioh.approve", `{"runId": "r-1", "forRun": "yes"}`, `ioh.approve: field "forRun": want a boolean, got string`, "forRun"},
		{"ioh.approve", `"r-1"`, `ioh.approve: want one object argument, got a string`, ""},
		{"ioh.approve", `[{"runId": "r-1"}]`, `ioh.approve: want one object argument, got an array`, ""},
		{"ioh.allowOnce", `{"runId": "r-1", "act": "exec"}`, `ioh.allowOnce: field "target": missing`, "target"},
		{"ioh.ask", `{"uri": "file:///a"}`, `ioh.ask: field "goal": missing`, "goal"},
		{"ioh.ask", `{"goal": "g", "range": {"start": {"line": -1, "character": 0}, "end": {"line": 0, "character": 0}}}`, `ioh.ask: field "range.start.line": want an integer, got number -1`, "range.start.line"},
		{"ioh.resume", `{"runId": "r-1", "budget": {"steps": "many"}}`, `ioh.resume: field "budget.steps": want an integer, got string`, "budget.steps"},
		{"ioh.run", `{}`, `ioh.run: missing "contract" or "inline"`, ""},
		{"ioh.run", ``, `ioh.run: missing "contract" or "inline"`, ""},
		{"ioh.run", `{"contract": "a.ioh.yaml", "inline": {"version": 1}}`, `ioh.run: give contract or inline, not both`, ""},
		{"ioh.runs", `7`, `ioh.runs: want one object argument, got a number`, ""},
	}
	for _, c := range cases {
		err := decoders[c.cmd](json.RawMessage(c.arg))
		var ae *api.ArgError
		if !errors.As(err, &ae) {
			t.Errorf("%s %s: err = %v, want an *ArgError", c.cmd, c.arg, err)
			continue
		}
		if !strings.Contains(err.Error(), c.want) || ae.Field != c.field || ae.Command != c.cmd {
			t.Errorf("%s %s: err = %q (field %q), want %q (field %q)", c.cmd, c.arg, err, ae.Field, c.want, c.field)
		}
	}
}

// TestGoodArgumentsDecode is the control: what a client sends today is
// read, an unknown field is ignored (as before the declarations).
func TestGoodArgumentsDecode(t *testing.T) {
	a, err := api.Approve.Decode(json.RawMessage(`{"runId": "r-1", "forRun": true, "extra": 1}`))
	if err != nil || a.RunID != "r-1" || !a.ForRun {
		t.Fatalf("approve = %+v, %v", a, err)
	}
	r, err := api.Resume.Decode(json.RawMessage(`{"runId": "r-1", "budget": {"cost_usd": 2.5, "wall": "30m"}}`))
	if err != nil || r.Budget == nil || r.Budget.CostUSD != 2.5 || r.Budget.Wall != "30m" {
		t.Fatalf("resume = %+v, %v", r, err)
	}
	for _, arg := range []string{``, `null`, `{}`} {
		if c, err := api.ClearTrace.Decode(json.RawMessage(arg)); err != nil || c.RunID != "" {
			t.Errorf("clearTrace %q = %+v, %v", arg, c, err)
		}
		if _, err := api.Runs.Decode(json.RawMessage(arg)); err != nil {
			t.Errorf("runs %q: %v", arg, err)
		}
	}
	if ra, err := api.Run.Decode(json.RawMessage(`{"inline": {"version": 1, "goal": "g"}}`)); err != nil || len(ra.Inline) == 0 {
		t.Errorf("run inline = %+v, %v", ra, err)
	}
}

// commandsSchema compiles the generated schema with the interpreter the
// contract parser uses.
func commandsSchema(t *testing.T) *contract.Schema {
	t.Helper()
	doc, err := api.CommandsSchema()
	if err != nil {
		t.Fatal(err)
	}
	s, err := contract.CompileSchema(doc)
	if err != nil {
		t.Fatalf("the built-in interpreter refuses the commands schema: %v", err)
	}
	return s
}

// TestSchemaAndServerAgree: for each argument, the schema's verdict is
// the server's, except that the schema also refuses unknown fields (the
// server ignores them).
func TestSchemaAndServerAgree(t *testing.T) {
	s := commandsSchema(t)
	args := map[string][]string{
		"ioh.run": {`{"contract": "t.ioh.yaml"}`, `{"inline": {"version": 1}}`, `{}`, `{"contract": "t", "inline": {}}`, `{"contract": 3}`, `{"contract": ""}`, `{"contract": "t", "inline": null}`, `{"inline": null}`, `{"contract": "", "inline": {}}`},
		"ioh.ask": {`{"goal": "g"}`, `{"goal": "g", "uri": "file:///a.go", "range": {"start": {"line": 1, "character": 0}, "end": {"line": 2, "character": 4}}}`,
			`{"goal": ""}`, `{"goal": "g", "range": {"start": {"line": -1, "character": 0}, "end": {"line": 0, "character": 0}}}`, `{"uri": "file:///a"}`},
		"ioh.approve":    {`{"runId": "r-1"}`, `{"runId": "r-1", "forRun": true}`, `{"runId": ""}`, `{"runId": 1}`, `{"forRun": true}`},
		"ioh.reject":     {`{"runId": "r-1", "reason": "no"}`, `{"reason": "no"}`, `{"runId": "r", "reason": 2}`},
		"ioh.cancel":     {`{"runId": "r-1"}`, `{}`},
		"ioh.resume":     {`{"runId": "r-1"}`, `{"runId": "r-1", "budget": {"steps": 10, "wall": "1h"}}`, `{"runId": "r-1", "budget": {"steps": 1.5}}`, `{"runId": "r-1", "budget": []}`},
		"ioh.trace":      {`{"runId": "r-1"}`, `{"runId": null}`},
		"ioh.runs":       {`{}`, `3`},
		"ioh.clearTrace": {`{}`, `{"runId": "r-1"}`, `{"runId": false}`},
		"ioh.showDiff":   {`{"runId": "r-1"}`, `{}`},
		"ioh.allowOnce":  {`{"runId": "r-1", "act": "exec", "target": "go test ./..."}`, `{"runId": "r-1", "act": "exec"}`},
	}
	for _, c := range api.All {
		def, err := s.Def(c.Name + ".args")
		if err != nil {
			t.Fatal(err)
		}
		if len(args[c.Name]) < 2 {
			t.Errorf("%s: no cases", c.Name)
		}
		for _, a := range args[c.Name] {
			serverErr := decoders[c.Name](json.RawMessage(a))
			schemaErr := def.Validate([]byte(a))
			if (serverErr == nil) != (schemaErr == nil) {
				t.Errorf("%s %s: server says %v, schema says %v", c.Name, a, serverErr, schemaErr)
			}
		}
		// An unknown field: the server reads the rest, the schema refuses.
		if c.NeedsArgument() {
			continue
		}
		if err := def.Validate([]byte(`{"runIdd": "r-1"}`)); err == nil || !strings.Contains(err.Error(), "unknown runIdd") {
			t.Errorf("%s: the schema accepts an unknown field (%v)", c.Name, err)
		}
	}
}

// TestExecuteCommandParamsSchema: the top of the document checks a whole
// {command, arguments}: an unknown command, a missing argument, and one
// that fits another command are refused.
func TestExecuteCommandParamsSchema(t *testing.T) {
	s := commandsSchema(t)
	good := []string{
		`{"command": "ioh.runs"}`,
		`{"command": "ioh.runs", "arguments": []}`,
		`{"command": "ioh.approve", "arguments": [{"runId": "r-1"}]}`,
		`{"command": "ioh.run", "arguments": [{"contract": "file:///w/t.ioh.yaml"}]}`,
		`{"command": "ioh.clearTrace"}`,
	}
	bad := []string{
		`{"command": "ioh.bogus", "arguments": []}`,
		`{"command": "ioh.approve"}`,
		`{"command": "ioh.approve", "arguments": []}`,
		`{"command": "ioh.approve", "arguments": [{"goal": "g"}]}`,
		`{"command": "ioh.run"}`,
		`{"arguments": [{"runId": "r-1"}]}`,
	}
	for _, g := range good {
		if err := s.Validate([]byte(g)); err != nil {
			t.Errorf("%s refused: %v", g, err)
		}
	}
	for _, b := range bad {
		if err := s.Validate([]byte(b)); err == nil {
			t.Errorf("%s accepted", b)
		}
	}
}

// TestResultsFitTheSchema: a result built from the declared types is
// accepted by its schema; one with a key the types do not have, or a
// required key missing, is not.
func TestResultsFitTheSchema(t *testing.T) {
	s := commandsSchema(t)
	cost := 0.02
	results := map[string]any{
		"ioh.run":        api.RunRef{RunID: "r-1"},
		"ioh.approve":    api.Decided{RunID: "r-1", Answer: "allow_once", Resumed: true},
		"ioh.reject":     api.Decided{RunID: "r-1", Outcome: "rejected"},
		"ioh.cancel":     api.Cancelled{RunID: "r-1"},
		"ioh.runs":       []api.RunInfo{{RunID: "r-1", Outcome: "applied", CostUSD: &cost, Limits: &api.RunLimits{Steps: 4, Wall: "1m0s"}}, {RunID: "r-2"}},
		"ioh.trace":      api.TraceSummary{RunInfo: api.RunInfo{RunID: "r-1"}, Events: 3, Types: map[string]int{"tool_call": 2}},
		"ioh.clearTrace": api.Cleared{},
		"ioh.showDiff":   api.Diff{RunID: "r-1", Diff: "--- a\n+++ b\n"},
	}
	f := false
	results["ioh.resume"] = api.Resumed{RunID: "r-1", Resumed: &f}
	for name, r := range results {
		def, err := s.Def(name + ".result")
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := json.Marshal(r)
		if err := def.Validate(raw); err != nil {
			t.Errorf("%s result %s refused: %v", name, raw, err)
		}
	}
	bad := map[string]string{
		"ioh.run":    `{"runID": "r-1"}`,
		"ioh.cancel": `{"runId": "r-1"}`,
		"ioh.runs":   `[{"runId": "r-1", "goal": "", "outcome": "x", "steps": 0, "tokens": 0, "started": ""}]`,
		"ioh.trace":  `{"runId": "r-1", "goal": "", "outcome": "x", "steps": 0, "tokens": 0, "costUsd": null, "started": "", "events": 1}`,
	}
	for name, raw := range bad {
		def, err := s.Def(name + ".result")
		if err != nil {
			t.Fatal(err)
		}
		if err := def.Validate([]byte(raw)); err == nil {
			t.Errorf("%s result %s accepted", name, raw)
		}
	}
}
