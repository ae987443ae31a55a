// Package verify runs a contract's checks in the sandbox against the
// workspace with the change set staged on top, enforces red/green honesty,
// and turns compiler and test output into file:line:col locations.
package verify

import "time"

// Report is the result of verifying one change set.
type Report struct {
	Checks []CheckResult `json:"checks"`
	// Passed: every check passed on the final change set.
	Passed bool `json:"passed"`
	// Proves is false when red/green was asked and some check already
	// passed before the change (so it proves nothing).
	Proves bool `json:"proves"`
	// Warnings: weak red-phase evidence and the like.
	Warnings []string `json:"warnings,omitempty"`
	// TouchesChecks says why the change touches its own checks (test files,
	// files that change what a check runs or how, package-init code, the
	// contract or its protect files). Such a change is never applied
	// automatically: it waits for a human, however the checks ended.
	TouchesChecks []string `json:"touches_checks,omitempty"`
	// TouchesChecksFiles are the workspace-relative paths those reasons
	// are about, for marking them in a review.
	TouchesChecksFiles []string `json:"touches_checks_files,omitempty"`
}

// NeedsHuman reports whether the change must wait for a person's review
// before it is applied: it touches its own checks.
func (r *Report) NeedsHuman() bool { return r != nil && len(r.TouchesChecks) > 0 }

// CheckResult is one check's outcome.
type CheckResult struct {
	Name      string        `json:"name"`
	Passed    bool          `json:"passed"`
	ExitCode  int           `json:"exit_code"`
	Signal    string        `json:"signal,omitempty"`
	CapHit    string        `json:"cap_hit,omitempty"`
	Duration  time.Duration `json:"duration"`
	Output    string        `json:"output,omitempty"`
	Locations []Location    `json:"locations,omitempty"`
	Backend   string        `json:"backend,omitempty"`
	// Downgrade says why the sandbox passed over stronger tiers for this
	// run ("" when it did not).
	Downgrade string `json:"downgrade,omitempty"`
	// Phase is "red" for the run on the unchanged tree, "green" otherwise.
	Phase string `json:"phase"`
	// Evidence is where the verdict comes from: per-test results (go test
	// -json, junit, tap) or "exit code only".
	Evidence string `json:"evidence"`
	// Tests summarises the per-test results; nil for exit code only or
	// when they could not be read.
	Tests *TestSummary `json:"tests,omitempty"`
	// Fixed (green phase under red/green) names the tests that failed
	// before the change and pass after it; FixedMore counts those left off.
	Fixed     []string `json:"fixed,omitempty"`
	FixedMore int      `json:"fixed_more,omitempty"`
	// Problems say why a green run that exited as expected still fails on
	// its per-test evidence ("TestMean (example.com/stats) did not run in
	// the green phase", "no test ran").
	Problems []string `json:"problems,omitempty"`
	// Failures are the tests failing in this run, each with its own
	// messages and locations: regressions (passed in the red phase, fail
	// now) first; at most maxNames, FailuresMore more.
	Failures     []Failure `json:"failures,omitempty"`
	FailuresMore int       `json:"failures_more,omitempty"`
	// Flaky names the tests that passed in the red phase, failed in the
	// green phase, then passed when the check ran again: "failed, then
	// passed on rerun: flaky". The check's verdict is the rerun's.
	Flaky []string `json:"flaky,omitempty"`
	// Preflight says in words why a red-phase run failed without a failing
	// test ("program not found: pytest (exit 127)", "Python module pytest
	// is missing", "the build failed before any test ran"): a problem of
	// the environment or the checks, not the failure the change must fix.
	Preflight string `json:"preflight,omitempty"`
}

// Failure is one failing test of a check run.
type Failure struct {
	Test string `json:"test"`
	// Status is fail, or incomplete for a test that never finished.
	Status Status `json:"status"`
	// Regression: the test passed in the red phase and fails now.
	Regression bool `json:"regression,omitempty"`
	// Locations are the file positions in the test's own output (its
	// failing assertions), workspace-relative where they can be.
	Locations []Location `json:"locations,omitempty"`
	// Output is the test's own output (its messages, the assertion),
	// bounded to a few KB with a line saying how much was left out.
	Output string `json:"output,omitempty"`
}

// Location is a file position found in a check's output.
type Location struct {
	Path    string `json:"path"` // workspace-relative when inside it
	Line    int    `json:"line"`
	Col     int    `json:"col,omitempty"`
	Message string `json:"message"`
	// Test names the failing test whose output carries it ("" for a
	// compiler or other message outside any test).
	Test string `json:"test,omitempty"`
}
