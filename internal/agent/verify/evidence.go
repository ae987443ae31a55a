package verify

import "fmt"

// Evidence names where a check's verdict comes from.
const (
	EvidenceGoTest   = "go test -json" // test2json events of `go test`
	EvidenceJUnit    = "junit"         // a JUnit XML report the check wrote
	EvidenceTAP      = "tap"           // TAP on the check's output
	EvidenceExitCode = "exit code only"
)

// Status is one test's result in one phase.
type Status string

const (
	StatusPass Status = "pass"
	StatusFail Status = "fail"
	StatusSkip Status = "skip"
	// StatusIncomplete: the test started and never reported a result (the
	// process exited or crashed inside it). It counts as a failure.
	StatusIncomplete Status = "incomplete"
)

// testRun is the per-test results of one check run, keyed by test name.
// A nil *testRun means the results could not be read.
type testRun struct {
	status map[string]Status
	order  []string // first-seen order, for stable messages
	// detail is a failing test's own output (its messages, location and
	// assertion), bounded; kept for the first maxDetails failures.
	detail map[string]testDetail
}

// testDetail is what one failing test printed, and where its relative
// paths point: a Go package's import path ("" when the paths are the
// check's own).
type testDetail struct {
	text string
	pkg  string
}

// maxDetails bounds the failing tests whose output a run keeps; perTest
// bounds each one's (head and tail).
const (
	maxDetails  = maxNames
	perTestHead = 1 << 10
	perTestTail = 2 << 10
)

func newTestRun() *testRun {
	return &testRun{status: map[string]Status{}, detail: map[string]testDetail{}}
}

// keep records a failing test's output while fewer than maxDetails are
// kept.
func (r *testRun) keep(name, text, pkg string) {
	if _, ok := r.detail[name]; ok || len(r.detail) >= maxDetails {
		return
	}
	r.detail[name] = testDetail{text, pkg}
}

// set records a test's result; a later result for the same name (a
// re-run, a subtest reported twice) wins, except that a failure sticks.
func (r *testRun) set(name string, st Status) {
	old, seen := r.status[name]
	if !seen {
		r.order = append(r.order, name)
	}
	if old == StatusFail {
		return
	}
	r.status[name] = st
}

// start records that a test began; its result, if any, comes later.
func (r *testRun) start(name string) {
	if _, seen := r.status[name]; !seen {
		r.set(name, StatusIncomplete)
	}
}

// failed reports whether st counts as a failure.
func failed(st Status) bool { return st == StatusFail || st == StatusIncomplete }

// ran counts the tests that ran to a pass or a failure.
func (r *testRun) ran() int {
	n := 0
	for _, st := range r.status {
		if st != StatusSkip {
			n++
		}
	}
	return n
}

// failures lists the failed and unfinished tests in order.
func (r *testRun) failures() []string {
	return append(r.with(StatusFail), r.with(StatusIncomplete)...)
}

func (r *testRun) with(st Status) []string {
	var out []string
	for _, name := range r.order {
		if r.status[name] == st {
			out = append(out, name)
		}
	}
	return out
}

// summary is what a report shows of a run.
func (r *testRun) summary() *TestSummary {
	if r == nil {
		return nil
	}
	s := &TestSummary{Ran: r.ran(), Passed: len(r.with(StatusPass)), Skipped: len(r.with(StatusSkip))}
	s.Failed, s.FailedMore = clip(r.failures())
	return s
}

// TestSummary is a check run's per-test results.
type TestSummary struct {
	// Ran counts tests that passed or failed; Skipped those skipped.
	Ran     int `json:"ran"`
	Passed  int `json:"passed"`
	Skipped int `json:"skipped"`
	// Failed names the failing tests (at most maxNames, FailedMore more).
	Failed     []string `json:"failed,omitempty"`
	FailedMore int      `json:"failed_more,omitempty"`
}

// maxNames bounds the test names a report lists per kind.
const maxNames = 50

func clip(names []string) ([]string, int) {
	if len(names) > maxNames {
		return names[:maxNames], len(names) - maxNames
	}
	return names, 0
}

// judge compares a green run with the red run of the same check (red nil
// when red/green is off or the red run had no readable results). It
// returns the problems that make the green run fail although the check
// exited as expected, and the tests that failed before and pass now.
//
// Zero tests is never a pass. Under red/green every test that failed
// before must have run and passed; a test that ran before (pass or fail)
// must run again: one missing or skipped now fails the check.
func judge(red, green *testRun) (problems, fixed []string) {
	if green == nil {
		return []string{"its per-test results could not be read"}, nil
	}
	if green.ran() == 0 {
		msg := "no test ran"
		if red != nil && red.ran() > 0 {
			msg = fmt.Sprintf("no test ran in the green phase (%d ran before the change)", red.ran())
		}
		problems = append(problems, msg)
	}
	if red == nil {
		return problems, nil
	}
	for _, name := range red.order {
		before := red.status[name]
		if before == StatusSkip {
			continue
		}
		after, ok := green.status[name]
		switch {
		case !ok:
			problems = append(problems, name+" did not run in the green phase")
		case after == StatusSkip:
			problems = append(problems, name+" was skipped in the green phase")
		case after == StatusIncomplete:
			problems = append(problems, name+" did not finish in the green phase")
		case failed(before) && after == StatusPass:
			fixed = append(fixed, name)
		case failed(before):
			problems = append(problems, name+" still fails")
		}
	}
	if len(problems) > maxNames {
		more := len(problems) - maxNames
		problems = append(problems[:maxNames], fmt.Sprintf("and %d more", more))
	}
	return problems, fixed
}
