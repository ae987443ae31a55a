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
	// Warnings: a check whose command or inputs the change set touched, etc.
	Warnings []string `json:"warnings,omitempty"`
}

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
	// Phase is "red" for the run on the unchanged tree, "green" otherwise.
	Phase string `json:"phase"`
}

// Location is a file position found in a check's output.
type Location struct {
	Path    string `json:"path"` // workspace-relative when inside it
	Line    int    `json:"line"`
	Col     int    `json:"col,omitempty"`
	Message string `json:"message"`
}
