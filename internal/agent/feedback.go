package agent

import (
	"fmt"
	"strings"

	"github.com/ioh-lsp/ioh-lsp/internal/agent/contract"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/verify"
)

// maxFeedback bounds the verification feedback a model reads after a
// failed finish; perTestFeedback one failing test's share of it.
const (
	maxFeedback     = 4000
	perTestFeedback = 900
)

// feedback builds bounded text for the model and says what it cut.
type feedback struct {
	b      strings.Builder
	max    int
	leftTs int // failing tests left out
	leftB  int // bytes left out
}

// add appends s when it fits; otherwise it counts it as left out.
func (f *feedback) add(s string) bool {
	if f.b.Len()+len(s) > f.max {
		f.leftB += len(s)
		return false
	}
	f.b.WriteString(s)
	return true
}

// checkFailures writes a failing check run: its problems, then each
// failing test with its own location and messages (regressions first,
// flaky tests named), or, without per-test failures, its locations and
// the end of its output.
func (f *feedback) checkFailures(c verify.CheckResult, how string) {
	f.add(fmt.Sprintf("check %q failed (exit %d%s)\n", c.Name, c.ExitCode, capNote(c)))
	for i, p := range c.Problems {
		if i == 5 {
			f.add(fmt.Sprintf("  and %d more problems\n", len(c.Problems)-5))
			break
		}
		f.add("  " + p + "\n")
	}
	if len(c.Flaky) > 0 {
		f.add("  " + strings.Join(c.Flaky, ", ") + ": failed, then passed on rerun: flaky\n")
	}
	for _, t := range c.Failures {
		if !f.add(testText(t)) {
			f.leftTs++
		}
	}
	f.leftTs += c.FailuresMore
	if len(c.Failures) > 0 {
		f.cut(how)
		return
	}
	for i, l := range c.Locations {
		if i == 20 {
			f.add(fmt.Sprintf("  and %d more locations\n", len(c.Locations)-20))
			break
		}
		f.add(fmt.Sprintf("  %s\n", locText(l)))
	}
	if out := tailOf(c.Output, min(1500, f.max-f.b.Len()-200)); out != "" {
		f.add("  output (end):\n" + indent(out) + "\n")
	}
	f.cut(how)
}

// cut says what was left out and how to see it.
func (f *feedback) cut(how string) {
	if f.leftTs == 0 && f.leftB == 0 {
		return
	}
	msg := "  [left out:"
	if f.leftTs > 0 {
		msg += fmt.Sprintf(" %d more failing tests", f.leftTs)
	}
	if f.leftB > 0 {
		msg += fmt.Sprintf(" %d bytes", f.leftB)
	}
	msg += "; see them with run: " + how + "]\n"
	f.max += len(msg) // the note itself always fits
	f.b.WriteString(msg)
	f.leftTs, f.leftB = 0, 0
}

// testText is one failing test: its name (a regression said so), its
// locations, and its own output without the runner's framing lines.
func testText(t verify.Failure) string {
	var b strings.Builder
	b.WriteString("FAIL " + t.Test)
	if t.Regression {
		b.WriteString(" (regression: it passed before the change)")
	}
	if t.Status == verify.StatusIncomplete {
		b.WriteString(" (did not finish)")
	}
	b.WriteString("\n")
	for _, l := range t.Locations {
		b.WriteString("  " + locText(l) + "\n")
	}
	var keep []string
	for _, line := range strings.Split(strings.TrimRight(t.Output, "\n"), "\n") {
		s := strings.TrimSpace(line)
		if s == "" || strings.HasPrefix(s, "=== ") || strings.HasPrefix(s, "--- FAIL: ") || shownAt(s, t.Locations) {
			continue
		}
		keep = append(keep, line)
	}
	if out := tailOf(strings.Join(keep, "\n"), perTestFeedback); out != "" {
		b.WriteString(indent(out) + "\n")
	}
	return b.String()
}

// shownAt reports whether an output line is one of the locations shown.
func shownAt(line string, locs []verify.Location) bool {
	for _, l := range locs {
		if l.Message != "" && strings.HasSuffix(line, fmt.Sprintf(":%d: %s", l.Line, l.Message)) {
			return true
		}
	}
	return false
}

func locText(l verify.Location) string {
	if l.Col > 0 {
		return fmt.Sprintf("%s:%d:%d: %s", l.Path, l.Line, l.Col, l.Message)
	}
	return fmt.Sprintf("%s:%d: %s", l.Path, l.Line, l.Message)
}

// tailOf is the end of s within max bytes, from a line start, marked when
// cut.
func tailOf(s string, max int) string {
	s = strings.TrimRight(s, "\n")
	if max <= 0 || s == "" {
		return ""
	}
	if len(s) <= max {
		return s
	}
	cut := len(s) - max
	s = s[cut:]
	if i := strings.IndexByte(s, '\n'); i >= 0 && i < len(s)-1 {
		cut += i + 1
		s = s[i+1:]
	}
	return fmt.Sprintf("[… %d bytes before this left out]\n", cut) + s
}

func indent(s string) string { return "    " + strings.ReplaceAll(s, "\n", "\n    ") }

// checkCommand is how the model runs a check itself.
func checkCommand(c contract.Check) string {
	if c.Shell != "" {
		return "shell " + c.Shell
	}
	return "argv " + strings.Join(c.Run, " ")
}

// commandOf is check name's command in v, "the check's command" if none.
func commandOf(v contract.Verify, name string) string {
	for i, c := range v.Checks {
		if c.Name == name || (c.Name == "" && fmt.Sprintf("check-%d", i+1) == name) {
			return checkCommand(c)
		}
	}
	return "the check's command"
}

// failureText is the feedback of a failed verification: each failing
// check on the change set, then the warnings; at most about maxFeedback
// bytes, saying what it left out.
func failureText(rep *verify.Report, v contract.Verify) string {
	f := &feedback{max: maxFeedback}
	for _, c := range rep.Checks {
		if c.Passed || c.Phase == verify.PhaseRed {
			continue
		}
		f.checkFailures(c, commandOf(v, c.Name))
	}
	for _, w := range rep.Warnings {
		f.add("warning: " + w + "\n")
	}
	return f.b.String()
}
