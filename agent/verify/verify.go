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
}

// Location is a file position found in a check's output.
type Location struct {
	Path    string `json:"path"` // workspace-relative when inside it
	Line    int    `json:"line"`
	Col     int    `json:"col,omitempty"`
	Message string `json:"message"`
}
