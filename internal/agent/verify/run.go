package verify

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"sync"

	"github.com/ioh-lsp/ioh-lsp/internal/agent/contain"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/contract"
	"github.com/ioh-lsp/ioh-lsp/internal/workspace"
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
	// OnCheckStart, if set, is called as each check run starts (red ones
	// and a rerun too) with the check's name and phase: what a live
	// status names while the check runs.
	OnCheckStart func(name, phase string)
	// Red, if set, keeps the red-phase runs for later verifications of the
	// same run: the unchanged tree stays unchanged while the agent works on
	// its change set, so a second finish need not run it again.
	Red *RedCache
	// Withheld are the workspace files (slash paths relative to Root) the
	// read policy keeps from the model in this run, as the run tool lists
	// them (tools.Withheld). The checks read them, but their values are
	// redacted out of every result ("[withheld: .env]"); see withheld.go.
	Withheld []string

	hide *withholder // Withheld's values, read once per verification
}

// RedCache holds red-phase results between verifications of one run. The
// zero value is ready; it is safe for concurrent use.
type RedCache struct {
	mu   sync.Mutex
	runs map[int]redRun
}

type redRun struct {
	res   CheckResult
	tests *testRun
}

func (r *RedCache) get(i int) (redRun, bool) {
	if r == nil {
		return redRun{}, false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	rr, ok := r.runs[i]
	return rr, ok
}

func (r *RedCache) put(i int, rr redRun) {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.runs == nil {
		r.runs = map[int]redRun{}
	}
	r.runs[i] = rr
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
// Evidence is per test where the runner reports it: `go test` argv gets
// -json, a check naming `report: junit:PATH` or `tap` is read through that
// report; any other check is "exit code only". A green run with per-test
// evidence fails when no test ran.
//
// With red_green, every check first runs on the unchanged tree (no
// changes) and must fail there; one that passes is reported as proving
// nothing (Report.Proves false, and a warning). With per-test evidence the
// green run must also show every test that failed before as run and
// passed, and every test that ran before as run again. Report.Passed is
// true only when every check passed on the change set; a run is verified
// only when Report.Verified() (Passed and Proves).
//
// Changes that touch a check's own inputs (see TouchedChecks) are listed
// in Report.TouchesChecks. An error means the checks could not be run
// (sandbox failure, cancellation); the report holds what ran so far.
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
	o.hide = newWithholder(o.Root, o.Withheld)
	rep := &Report{Proves: true}
	rep.TouchesChecks, rep.TouchesChecksFiles = touchedChecks(o.Verify, o.Changes, o.ContractPath, o.Root)
	_, _, rep.Warnings = touchedInputs(o.Verify, o.Changes, o.ContractPath)
	changed := changedPaths(o.Changes)
	red := map[int]*testRun{}
	if o.Verify.RedGreen {
		for i, c := range o.Verify.Checks {
			res, tests, err := o.redRun(ctx, i, c)
			if err != nil {
				return rep, err
			}
			red[i] = tests
			rep.Checks = append(rep.Checks, res)
			switch {
			case res.Passed:
				rep.Proves = false
				rep.Warnings = append(rep.Warnings, fmt.Sprintf("check %s passed before the change: it proves nothing", res.Name))
			case res.CapHit != "" || res.Signal != "":
				rep.Warnings = append(rep.Warnings, fmt.Sprintf("check %s failed before the change only by %s: weak evidence", res.Name, cause(res)))
			case res.Evidence != EvidenceExitCode && (tests == nil || len(tests.failures()) == 0):
				rep.Warnings = append(rep.Warnings, fmt.Sprintf("check %s failed before the change without a failing test (a build or setup failure): the tests it fixes cannot be named", res.Name))
			}
		}
	}
	rep.Passed = true
	for i, c := range o.Verify.Checks {
		res, err := greenRun(ctx, o, c, checkName(c, i), changed, red[i])
		if err != nil {
			rep.Passed = false
			return rep, err
		}
		o.told(res)
		if len(res.Flaky) > 0 {
			rep.Warnings = append(rep.Warnings, fmt.Sprintf("check %s: %s failed, then passed on rerun: flaky", res.Name, strings.Join(res.Flaky, ", ")))
		}
		rep.Checks = append(rep.Checks, res)
		if !res.Passed {
			rep.Passed = false
		}
	}
	return rep, nil
}

// redRun is check i's run on the unchanged tree, from o.Red when an
// earlier verification of the run (or RunRed) ran it.
func (o Options) redRun(ctx context.Context, i int, c contract.Check) (CheckResult, *testRun, error) {
	if rr, ok := o.Red.get(i); ok {
		return rr.res, rr.tests, nil
	}
	res, tests, err := runCheck(ctx, o, c, checkName(c, i), PhaseRed, nil, nil)
	if err != nil {
		return res, nil, err
	}
	o.told(res)
	o.Red.put(i, redRun{res, tests})
	return res, tests, nil
}

// RunRed runs every check's red phase (the unchanged tree) into o.Red,
// for a run that shows the model the failing checks before its first
// step: the later verifications take them from there. It returns the
// runs in check order; o.Changes is not used.
func RunRed(ctx context.Context, o Options) ([]CheckResult, error) {
	if len(o.Verify.Checks) == 0 {
		return nil, ErrNoChecks
	}
	if o.Sandbox == nil {
		return nil, errors.New("verify: no sandbox")
	}
	o.hide = newWithholder(o.Root, o.Withheld)
	var out []CheckResult
	for i, c := range o.Verify.Checks {
		if (len(c.Run) == 0) == (c.Shell == "") {
			return out, fmt.Errorf("verify: check %d (%s): want exactly one of run and shell", i, c.Name)
		}
		res, _, err := o.redRun(ctx, i, c)
		if err != nil {
			return out, err
		}
		out = append(out, res)
	}
	return out, nil
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

// plan is how a check is run and read.
type plan struct {
	argv     []string
	shell    string
	evidence string
	pattern  string // junit report path or glob
}

// canReport: JUnit reports come back through a /bin/sh wrapper, which
// Windows lacks; there such checks are exit code only.
var canReport = runtime.GOOS != "windows"

// planCheck decides a check's evidence and the command that yields it.
func planCheck(c contract.Check) plan {
	p := plan{argv: append([]string(nil), c.Run...), shell: c.Shell, evidence: EvidenceExitCode}
	switch {
	case c.Report == "tap":
		p.evidence = EvidenceTAP
	case strings.HasPrefix(c.Report, "junit:") && !canReport:
		// no /bin/sh to bring the report back: said as exit code only
	case strings.HasPrefix(c.Report, "junit:"):
		p.evidence, p.pattern = EvidenceJUnit, strings.TrimPrefix(c.Report, "junit:")
		p.argv = withReport(p.argv, p.shell, p.pattern)
		p.shell = ""
	case c.Report == "" && canReport && isPytest(c.Run):
		// pytest writes a JUnit report where we ask: in the sandbox's
		// private /tmp, so nothing in the workspace can stand in for it
		tag := make([]byte, 8)
		_, _ = rand.Read(tag)
		p.evidence, p.pattern = EvidenceJUnit, "/tmp/ioh-pytest-"+hex.EncodeToString(tag)+".xml"
		p.argv = withReport(append(p.argv, "--junitxml="+p.pattern), "", p.pattern)
	case c.Report == "" && isGoTest(c.Run):
		if argv, ok := goTestJSON(p.argv); ok {
			p.argv, p.evidence = argv, EvidenceGoTest
		}
	case c.Report == "" && plainShell(c.Shell) && isGoTest(strings.Fields(c.Shell)):
		// a shell line that is just `go test …`, with nothing the shell
		// would interpret: the same words with -json
		if argv, ok := goTestJSON(strings.Fields(c.Shell)); ok {
			p.shell, p.evidence = strings.Join(argv, " "), EvidenceGoTest
		}
	}
	return p
}

// plainShell reports whether a shell line is a plain list of words: no
// quoting, expansion, redirection or command separators.
func plainShell(line string) bool {
	return line != "" && !strings.ContainsAny(line, "\"'`$\\;&|<>(){}*?[]~#=\n")
}

// runCheck runs one check and returns its result and per-test results
// (nil for exit code only or when unreadable); red is the same check's
// red-phase results when this is a green run under red/green.
//
// The per-test evidence is read from the whole output, streamed to a
// spool file as it comes: a suite of any size is judged exactly, in
// bounded memory. The text kept in the result is head and tail.
func runCheck(ctx context.Context, o Options, c contract.Check, name, phase string, changes []workspace.Change, changed []string, red ...*testRun) (CheckResult, *testRun, error) {
	if err := ctx.Err(); err != nil {
		return CheckResult{}, nil, fmt.Errorf("verify %s (%s): %w", name, phase, err)
	}
	if o.OnCheckStart != nil {
		o.OnCheckStart(name, phase)
	}
	limit := o.OutputLimit
	if limit <= 0 {
		limit = DefaultOutputLimit
	}
	p := planCheck(c)
	req := &contain.Request{
		Argv:        p.argv,
		Shell:       p.shell,
		Root:        o.Root,
		Changes:     changes,
		Network:     c.Network,
		Timeout:     c.Timeout,
		OutputLimit: limit,
	}
	var spool *os.File
	if p.evidence != EvidenceExitCode {
		f, err := os.CreateTemp("", "ioh-evidence-*")
		if err != nil {
			return CheckResult{}, nil, fmt.Errorf("verify %s (%s): spool its output: %w", name, phase, err)
		}
		defer os.Remove(f.Name())
		defer f.Close()
		spool, req.Stream = f, f
	}
	res, err := o.Sandbox.Exec(ctx, req)
	if err != nil {
		return CheckResult{}, nil, fmt.Errorf("verify %s (%s): run in sandbox: %w", name, phase, err)
	}
	src, size := evidenceSource(spool, res.Output)
	text, tests, unreadable := readEvidence(p, src, size, int(limit))
	opts := ParseOptions{Root: o.Root, Changed: changed}
	var before *testRun
	if len(red) > 0 {
		before = red[0]
	}
	cr := CheckResult{
		Name:      name,
		Passed:    res.Passed(c.ExpectExit),
		ExitCode:  res.ExitCode,
		Signal:    res.Signal,
		CapHit:    res.CapHit,
		Duration:  res.Duration,
		Output:    text,
		Backend:   res.Backend,
		Downgrade: res.Downgrade,
		Phase:     phase,
		Evidence:  p.evidence,
		Tests:     tests.summary(),
	}
	cr.Failures, cr.FailuresMore = failuresOf(tests, before, opts)
	cr.Locations = locationsOf(cr.Failures, text, opts)
	if phase == PhaseGreen && p.evidence != EvidenceExitCode {
		var fixed []string
		cr.Problems, fixed = judge(before, tests)
		if tests == nil && unreadable != "" {
			cr.Problems = []string{unreadable}
		}
		cr.Fixed, cr.FixedMore = clip(fixed)
		if len(cr.Problems) > 0 {
			cr.Passed = false
		}
	}
	if phase == PhaseRed && !cr.Passed {
		cr.Preflight = preflight(cr, p, tests, unreadable)
	}
	o.hide.result(&cr)
	return cr, tests, nil
}

func (o Options) told(c CheckResult) {
	if o.OnCheck != nil {
		o.OnCheck(c)
	}
}

// greenRun runs a check on the change set. A test that passed in the red
// phase and fails now is rerun once before it counts as a regression:
// when the rerun passes it, it is flaky ("failed, then passed on rerun")
// and the check's verdict is the rerun's.
func greenRun(ctx context.Context, o Options, c contract.Check, name string, changed []string, red *testRun) (CheckResult, error) {
	res, _, err := runCheck(ctx, o, c, name, PhaseGreen, o.Changes, changed, red)
	if err != nil || res.Passed || !hasRegression(res) {
		return res, err
	}
	o.told(res)
	again, tests, err := runCheck(ctx, o, c, name, PhaseGreen, o.Changes, changed, red)
	if err != nil {
		return res, err
	}
	for _, f := range res.Failures {
		if f.Regression && tests != nil && tests.status[f.Test] == StatusPass {
			again.Flaky = append(again.Flaky, f.Test)
		}
	}
	return again, nil
}

func hasRegression(c CheckResult) bool {
	for _, f := range c.Failures {
		if f.Regression {
			return true
		}
	}
	return false
}

// evidenceSource is where a check's evidence is read from: the spool
// file the sandbox streamed the whole output to, or (a sandbox that does
// not stream) the output it kept.
func evidenceSource(spool *os.File, kept []byte) (io.ReaderAt, int64) {
	if spool != nil {
		if fi, err := spool.Stat(); err == nil && fi.Size() > 0 {
			return spool, fi.Size()
		}
	}
	return bytes.NewReader(kept), int64(len(kept))
}

// readEvidence reads a check's output (size bytes at src) into the text a
// person reads, kept to limit bytes, and its per-test results (nil, with
// the reason, when they cannot be read; nil and "" for exit code only).
func readEvidence(p plan, src io.ReaderAt, size int64, limit int) (text string, tests *testRun, unreadable string) {
	all := io.NewSectionReader(src, 0, size)
	switch p.evidence {
	case EvidenceGoTest:
		tests, text = readGoTest(all, limit)
		if tests == nil {
			unreadable = "go test printed no test2json events"
		}
		return text, tests, unreadable
	case EvidenceJUnit:
		textLen, files, complete := splitReportAt(src, size)
		tests, unreadable = readReports(files, complete, p.pattern)
		return keptText(io.NewSectionReader(src, 0, textLen), limit), tests, unreadable
	case EvidenceTAP:
		tests, err := readTAP(all)
		text = keptText(io.NewSectionReader(src, 0, size), limit)
		if err != nil {
			return text, nil, err.Error()
		}
		return text, tests, ""
	}
	return keptText(all, limit), nil, ""
}

// keptText is r's text kept to limit bytes, head and tail.
func keptText(r io.Reader, limit int) string {
	c := newClip(limit/2, limit/2)
	buf := make([]byte, 32<<10)
	for {
		n, err := r.Read(buf)
		c.WriteString(string(buf[:n]))
		if err != nil {
			return c.String()
		}
	}
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
