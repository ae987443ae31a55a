package config

import (
	"path/filepath"
	"testing"
)

// TestLoadTypeErrors: a value of the wrong type names the field's path and
// what it wants in words, at its line and column, for the user config and
// the editor settings alike (QA: "cannot unmarshal string into Go struct
// field file.Budget of type int", "cannot unmarshal []interface {} into Go
// struct field file.Sandbox of type string", "string was used where
// sequence is expected").
func TestLoadTypeErrors(t *testing.T) {
	tests := []loadErrorCase{
		{"word for a number", "budget:\n  steps: ten\n", "", `USER:2:10: budget.steps: want a whole number, got "ten"`},
		{"list for a string", "sandbox: {require: [linux]}\n", "", `USER:1:20: sandbox.require: want a string, got a list`},
		{"string for a list", "sandbox:\n  readable: /etc\n", "", `USER:2:13: sandbox.readable: want a list, got "/etc"`},
		{"overflow", "budget: {steps: 99999999999999999999999}\n", "", `USER:1:17: budget.steps: 99999999999999999999999 does not fit (want a whole number)`},
		{"in a list element", "model: {fallback: [{name: [x]}]}\n", "", `USER:1:27: model.fallback[0].name: want a string, got a list`},
		{"in a map", "prices: {m: {input: abc}}\n", "", `USER:1:21: prices.m.input: want a number, got "abc"`},
		{"list for a mapping", "budget: [1]\n", "", `USER:1:9: budget: want a mapping, got a list`},
		{"in the editor settings", "", `{"budget": {"steps": "x"}}`, `editor settings:1:22: budget.steps: want a whole number, got "x"`},
		{"fraction for a whole number", "budget:\n  steps: 1.5\n", "", `USER:2:10: budget.steps: want a whole number, got "1.5"`},
		{"fraction in the editor settings", "", `{"sandbox": {"limits": {"procs": 2.5}}}`, `editor settings:1:34: sandbox.limits.procs: want a whole number, got "2.5"`},
	}
	checkLoadErrors(t, tests)
	// The control: the same keys with values of the right types load.
	user := filepath.Join(t.TempDir(), "config.yaml")
	write(t, user, "budget: {steps: 10, tokens: 1e6, cost_usd: 1.5}\nsandbox: {require: linux, readable: [/etc]}\nprices: {m: {input: 1}}\n")
	c, err := Load(LoadOptions{UserPath: user, Getenv: func(string) string { return "" }})
	if err != nil || c.Budget.Steps != 10 || c.Budget.Tokens != 1000000 || c.Budget.CostUSD != 1.5 {
		t.Fatalf("control: %+v, %v", c, err)
	}
}
