package verify

import (
	"fmt"
	"strings"
)

// Describe says in one line what a check run shows and on what evidence:
// "unit: passed (go test -json, 2 tests ran); failed before, pass now:
// TestMean (example.com/stats)", "lint: passed (exit code only)", "unit:
// FAILED (go test -json): TestMean (example.com/stats) did not run in the
// green phase". The CLI, the trace, the terminal and the editor all show
// this line, so nobody reads an exit code as test-level evidence.
func (c CheckResult) Describe() string {
	var b strings.Builder
	b.WriteString(c.Name + ": ")
	if c.Passed {
		b.WriteString("passed")
	} else {
		b.WriteString("FAILED")
		if c.Signal != "" {
			fmt.Fprintf(&b, " (signal %s)", c.Signal)
		} else if c.CapHit != "" {
			fmt.Fprintf(&b, " (%s cap)", c.CapHit)
		} else if len(c.Problems) == 0 {
			fmt.Fprintf(&b, " (exit %d)", c.ExitCode)
		}
	}
	ev := c.Evidence
	if ev == "" {
		ev = EvidenceExitCode
	}
	switch {
	case c.Tests != nil:
		fmt.Fprintf(&b, " (%s, %s ran", ev, plural(c.Tests.Ran, "test"))
		if c.Tests.Skipped > 0 {
			fmt.Fprintf(&b, ", %d skipped", c.Tests.Skipped)
		}
		b.WriteString(")")
	default:
		fmt.Fprintf(&b, " (%s)", ev)
	}
	if len(c.Problems) > 0 {
		b.WriteString(": " + strings.Join(c.Problems, "; "))
	} else if c.Tests != nil && len(c.Tests.Failed) > 0 && !c.Passed {
		b.WriteString(": failing " + names(c.Tests.Failed, c.Tests.FailedMore))
	}
	if !c.Passed {
		b.WriteString(failingAt(c))
	}
	if len(c.Flaky) > 0 {
		b.WriteString("; " + strings.Join(c.Flaky, ", ") + " failed, then passed on rerun: flaky")
	}
	if len(c.Fixed) > 0 {
		b.WriteString("; failed before, pass now: " + names(c.Fixed, c.FixedMore))
	}
	return b.String()
}

// failingAt names the first failing tests with their own location and
// message: "; TestMean (example.com/stats) at stats_test.go:7: Mean(…) =
// 2, want 2.5".
func failingAt(c CheckResult) string {
	var b strings.Builder
	shown := 0
	for _, f := range c.Failures {
		if len(f.Locations) == 0 {
			continue
		}
		if shown == 3 {
			fmt.Fprintf(&b, "; and %d more failing", len(c.Failures)+c.FailuresMore-shown)
			break
		}
		l := f.Locations[0]
		fmt.Fprintf(&b, "; %s at %s:%d: %s", f.Test, l.Path, l.Line, l.Message)
		if f.Regression {
			b.WriteString(" (regression)")
		}
		shown++
	}
	return b.String()
}

// Evidence describes each check's final (green) run, one line a check.
func (r *Report) Evidence() []string {
	if r == nil {
		return nil
	}
	var out []string
	for _, c := range r.Checks {
		if c.Phase == PhaseGreen {
			out = append(out, c.Describe())
		}
	}
	return out
}

func names(list []string, more int) string {
	s := strings.Join(list, ", ")
	if more > 0 {
		s += fmt.Sprintf(" and %d more", more)
	}
	return s
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}
