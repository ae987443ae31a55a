package verify

import (
	"context"
	"errors"
	"fmt"

	"github.com/ioh-lsp/ioh-lsp/agent/contain"
	"github.com/ioh-lsp/ioh-lsp/agent/contract"
	"github.com/ioh-lsp/ioh-lsp/workspace"
)

// ErrNoChecks is returned when there is nothing to verify.
var ErrNoChecks = errors.New("verify: the contract has no checks")

// DefaultOutputLimit bounds the output kept per check run.
const DefaultOutputLimit = 256 << 10

// Phases of a check run.
const (
	PhaseRed   = "red"   // the unchanged tree; must fail under red_green
	PhaseGreen = "green" // workspace ⊕ change set; must pass
)

// Options are everything one verification needs.
type Options struct {
	Sandbox contain.Sandbox
	// Root is the workspace's absolute directory.
	Root    string
	Changes []workspace.Change
	Verify  contract.Verify
	// ContractPath is the workspace-relative path of the task file, if the
	// contract came from one inside the workspace: a change to it is
	// reported like a change to a protect file.
	ContractPath string
	// OutputLimit per check run; 0 means DefaultOutputLimit.
	OutputLimit int64
	// OnCheck, if set, is called after every check run (red ones too).
	OnCheck func(CheckResult)
}

// Run verifies changes against v in the sandbox: see RunWith.
func Run(ctx context.Context, sb contain.Sandbox, root string, changes []workspace.Change, v contract.Verify, onCheck func(CheckResult)) (*Report, error) {
	return RunWith(ctx, Options{Sandbox: sb, Root: root, Changes: changes, Verify: v, OnCheck: onCheck})
}

// RunWith runs the checks in order in the sandbox, each with its own
// timeout and with the network off unless the check asks for it, on the
// workspace with the change set staged on top. Every check runs even after
// one fails, so the report carries every failure's locations.
//
// With red_green, every check first runs on the unchanged tree (no
// changes) and must fail there; one that passes is reported as proving
// nothing (Report.Proves false, and a warning). Report.Passed is true only
// when every check passed on the change set; a run is verified only when
// Report.Verified() (Passed and Proves).
//
// Changes that touch what a check runs (its program, files named in its
// arguments, the protect files, the contract, build files the tool reads)
// are reported in Report.Warnings. An error means the checks could not be
// run (sandbox failure, cancellation); the report holds what ran so far.
func RunWith(ctx context.Context, o Options) (*Report, error) {
	if len(o.Verify.Checks) == 0 {
		return nil, ErrNoChecks
	}
	if o.Sandbox == nil {
		return nil, errors.New("verify: no sandbox")
	}
	for i, c := range o.Verify.Checks {
		if (len(c.Run) == 0) == (c.Shell == "") {
			return nil, fmt.Errorf("verify: check %d (%s): want exactly one of run and shell", i, c.Name)
		}
	}
	rep := &Report{Proves: true}
	rep.Warnings = append(rep.Warnings, TouchedInputs(o.Verify, o.Changes, o.ContractPath)...)
	changed := changedPaths(o.Changes)
	if o.Verify.RedGreen {
		for i, c := range o.Verify.Checks {
			res, err := runCheck(ctx, o, c, checkName(c, i), PhaseRed, nil, nil)
			if err != nil {
				return rep, err
			}
			rep.Checks = append(rep.Checks, res)
			if res.Passed {
				rep.Proves = false
				rep.Warnings = append(rep.Warnings, fmt.Sprintf("check %s passed before the change: it proves nothing", res.Name))
			} else if res.CapHit != "" || res.Signal != "" {
				rep.Warnings = append(rep.Warnings, fmt.Sprintf("check %s failed before the change only by %s: weak evidence", res.Name, cause(res)))
			}
		}
	}
	rep.Passed = true
	for i, c := range o.Verify.Checks {
		res, err := runCheck(ctx, o, c, checkName(c, i), PhaseGreen, o.Changes, changed)
		if err != nil {
			rep.Passed = false
			return rep, err
		}
		rep.Checks = append(rep.Checks, res)
		if !res.Passed {
			rep.Passed = false
		}
	}
	return rep, nil
}

// Verified reports whether the report supports the outcome verified: every
// check passed on the change set and, under red_green, failed without it.
func (r *Report) Verified() bool { return r != nil && r.Passed && r.Proves }

// Failures returns the green-phase checks that failed.
func (r *Report) Failures() []CheckResult {
	var out []CheckResult
	for _, c := range r.Checks {
		if c.Phase == PhaseGreen && !c.Passed {
			out = append(out, c)
		}
	}
	return out
}

func runCheck(ctx context.Context, o Options, c contract.Check, name, phase string, changes []workspace.Change, changed []string) (CheckResult, error) {
	if err := ctx.Err(); err != nil {
		return CheckResult{}, fmt.Errorf("verify %s (%s): %w", name, phase, err)
	}
	limit := o.OutputLimit
	if limit <= 0 {
		limit = DefaultOutputLimit
	}
	req := &contain.Request{
		Argv:        append([]string(nil), c.Run...),
		Shell:       c.Shell,
		Root:        o.Root,
		Changes:     changes,
		Network:     c.Network,
		Timeout:     c.Timeout,
		OutputLimit: limit,
	}
	res, err := o.Sandbox.Exec(ctx, req)
	if err != nil {
		return CheckResult{}, fmt.Errorf("verify %s (%s): run in sandbox: %w", name, phase, err)
	}
	out := res.Output
	if int64(len(out)) > limit {
		out = out[:limit] // a sandbox that ignored the cap
	}
	cr := CheckResult{
		Name:      name,
		Passed:    res.Passed(c.ExpectExit),
		ExitCode:  res.ExitCode,
		Signal:    res.Signal,
		CapHit:    res.CapHit,
		Duration:  res.Duration,
		Output:    string(out),
		Locations: Parse(string(out), ParseOptions{Root: o.Root, Changed: changed}),
		Backend:   res.Backend,
		Phase:     phase,
	}
	if res.Truncated || int64(len(res.Output)) > limit {
		cr.Output += "\n[output truncated]"
	}
	if o.OnCheck != nil {
		o.OnCheck(cr)
	}
	return cr, nil
}

func checkName(c contract.Check, i int) string {
	if c.Name != "" {
		return c.Name
	}
	return fmt.Sprintf("check-%d", i+1)
}

func cause(r CheckResult) string {
	if r.CapHit != "" {
		return "hitting the " + r.CapHit + " cap"
	}
	return "signal " + r.Signal
}

func changedPaths(changes []workspace.Change) []string {
	var out []string
	for _, c := range changes {
		out = append(out, c.Path)
		if c.From != "" {
			out = append(out, c.From)
		}
	}
	return out
}
