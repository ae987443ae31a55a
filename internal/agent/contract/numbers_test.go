package contract

import (
	"errors"
	"testing"
)

// TestNumbersAsYAMLReadsThem: a plain 1e6 is a number (YAML 1.2), so
// budget.tokens: 1e6 is 1000000; an integer too large for its field is a
// contract error at its position naming the field and the limit (QA: both
// said "expected integer, got string"). A quoted "1e6" stays a string.
func TestNumbersAsYAMLReadsThem(t *testing.T) {
	c, err := Parse([]byte("goal: \"1e6\"\nbudget: {tokens: 1e6, steps: 2E2, cost_usd: 1e-1}\n"), "t.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if c.Goal != "1e6" || c.Budget.Tokens != 1000000 || c.Budget.Steps != 200 || c.Budget.CostUSD != 0.1 {
		t.Errorf("goal %q, budget %+v; want goal 1e6, tokens 1000000, steps 200, cost 0.1", c.Goal, c.Budget)
	}
	for _, tc := range []struct{ src, want string }{
		{"goal: g\nbudget: {steps: 99999999999999999999999}\n",
			"t.yaml:2:17: budget.steps: 99999999999999999999999 does not fit (want a whole number of at most 9223372036854775807)"},
		{"goal: g\nbudget:\n  tokens: 1e19\n",
			"t.yaml:3:11: budget.tokens: 10000000000000000000 does not fit (want a whole number of at most 9223372036854775807)"},
		{"goal: g\nagents: {max_total: 18446744073709551615}\n",
			"t.yaml:2:21: agents.max_total: 18446744073709551615 does not fit (want a whole number of at most 9223372036854775807)"},
		{"goal: g\nbudget: {tokens: 1.5e0}\n",
			"t.yaml:2:18: budget.tokens: expected integer, got number"},
	} {
		_, err := Parse([]byte(tc.src), "t.yaml")
		var ce *Error
		if !errors.As(err, &ce) || err.Error() != tc.want {
			t.Errorf("Parse(%q):\n got %v\nwant %s", tc.src, err, tc.want)
		}
	}
}
