package agent

import (
	"errors"
	"fmt"
	"testing"
)

// TestStopLimit: the limit that stopped a run comes from its typed error
// whatever the text says, from the recorded text for a run read back
// from the store, and is "" for any other outcome.
func TestStopLimit(t *testing.T) {
	for _, c := range []struct {
		res  *Result
		want Limit
	}{
		{&Result{Outcome: OutcomeBudgetExceeded, Err: &BudgetError{Limit: LimitWall, Err: errors.New("the deadline passed")}}, LimitWall},
		{&Result{Outcome: OutcomeBudgetExceeded, Err: fmt.Errorf("run: %w", &BudgetError{Limit: LimitCost, Err: errors.New("spent")})}, LimitCost},
		{&Result{Outcome: OutcomeBudgetExceeded, Err: errors.New("step budget of 3 spent")}, LimitSteps},
		{&Result{Outcome: OutcomeBudgetExceeded, Err: errors.New("something else")}, ""},
		{&Result{Outcome: OutcomeStalled, Err: &BudgetError{Limit: LimitSteps, Err: errors.New("x")}}, ""},
		{&Result{Outcome: OutcomeBudgetExceeded}, ""},
		{nil, ""},
	} {
		if got := c.res.StopLimit(); got != c.want {
			t.Errorf("StopLimit(%+v) = %q, want %q", c.res, got, c.want)
		}
	}
}
