package verify

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ioh-lsp/ioh-lsp/internal/agent/contain"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/contract"
)

// chattyEvents is `go test -json` of a package whose n passing tests each
// log one line, with one failing TestMean in the middle (its message
// before its --- FAIL line, as test2json prints it).
func chattyEvents(pkg string, n int) string {
	var b strings.Builder
	ev := func(action, test, out string) {
		fmt.Fprintf(&b, `{"Action":%q,"Package":%q,"Test":%q,"Output":%q}`+"\n", action, pkg, test, out)
	}
	for i := range n {
		name := fmt.Sprintf("TestChatty%03d", i)
		ev("run", name, "")
		ev("output", name, "=== RUN   "+name+"\n")
		ev("output", name, fmt.Sprintf("    chatty_test.go:%d: step %d ok\n", 10+i, i))
		ev("output", name, "--- PASS: "+name+" (0.00s)\n")
		ev("pass", name, "")
		if i == n/2 {
			ev("run", "TestMean", "")
			ev("output", "TestMean", "=== RUN   TestMean\n")
			ev("output", "TestMean", "    stats_test.go:12: Mean([1 2 3 4]) = 2, want 2.5\n")
			ev("output", "TestMean", "--- FAIL: TestMean (0.00s)\n")
			ev("fail", "TestMean", "")
		}
	}
	ev("output", "", "FAIL\n")
	ev("output", "", "FAIL\t"+pkg+"\t0.01s\n")
	ev("fail", "", "")
	return b.String()
}

var chattyTree = map[string]string{"go.mod": "module example.com/stats\n", "stats.go": "package stats\n",
	"stats_test.go": "package stats\n", "chatty_test.go": "package stats\n"}

// TestGoFailureHasItsOwnMessage: in a chatty suite the failing test's own
// message and location come back, and no passing test's log line does
// (the parser used to take the lines after --- FAIL: 300 passing tests'
// logs, and missed the assertion before it).
func TestGoFailureHasItsOwnMessage(t *testing.T) {
	root := writeTree(t, chattyTree)
	out := chattyEvents("example.com/stats", 300)
	sb := &scriptedSandbox{answer: func(*contain.Request) (*contain.Result, error) {
		return &contain.Result{ExitCode: 1, Output: []byte(out)}, nil
	}}
	rep, err := RunWith(context.Background(), Options{Sandbox: sb, Root: root,
		Verify: contract.Verify{Checks: []contract.Check{{Name: "unit", Run: []string{"go", "test", "./..."}}}}})
	if err != nil {
		t.Fatal(err)
	}
	c := rep.Checks[0]
	want := []Location{{Path: "stats_test.go", Line: 12, Message: "Mean([1 2 3 4]) = 2, want 2.5", Test: "TestMean (example.com/stats)"}}
	if diff := cmp.Diff(c.Locations, want); diff != "" {
		t.Errorf("locations (-got +want):\n%s", diff)
	}
	if len(c.Failures) != 1 || c.Failures[0].Test != "TestMean (example.com/stats)" || !strings.Contains(c.Failures[0].Output, "want 2.5") {
		t.Fatalf("failures %+v", c.Failures)
	}
	if strings.Contains(c.Failures[0].Output, "step") {
		t.Errorf("a passing test's log line joined the failure: %q", c.Failures[0].Output)
	}
	if d := c.Describe(); !strings.Contains(d, "TestMean (example.com/stats) at stats_test.go:12: Mean([1 2 3 4]) = 2, want 2.5") {
		t.Errorf("the evidence line (CLI summary, review, trace) does not name the failure at its place: %q", d)
	}
}

// TestGoTextParserTakesOnlyFailingTests: plain `go test -v` text: the
// messages before --- FAIL (and, without -v, after it) are the failure's;
// a passing test's log lines are not.
func TestGoTextParserTakesOnlyFailingTests(t *testing.T) {
	root := writeTree(t, chattyTree)
	verbose := "=== RUN   TestA\n    chatty_test.go:3: hello\n--- PASS: TestA (0.00s)\n=== RUN   TestMean\n    stats_test.go:12: want 2.5\n--- FAIL: TestMean (0.00s)\n=== RUN   TestB\n    chatty_test.go:5: noise\n--- PASS: TestB (0.00s)\nFAIL\nFAIL\texample.com/stats\t0.01s\n"
	quiet := "--- FAIL: TestMean (0.00s)\n    stats_test.go:12: want 2.5\nFAIL\nFAIL\texample.com/stats\t0.01s\n"
	want := []Location{{Path: "stats_test.go", Line: 12, Message: "want 2.5"}}
	for name, out := range map[string]string{"-v": verbose, "quiet": quiet} {
		if diff := cmp.Diff(Parse(out, ParseOptions{Root: root}), want); diff != "" {
			t.Errorf("%s: locations (-got +want):\n%s", name, diff)
		}
	}
}

// TestJUnitAndTAPFailuresCarryTheirBodies: a JUnit <failure> body and a
// TAP diagnostic block are the failing test's own output.
func TestJUnitAndTAPFailuresCarryTheirBodies(t *testing.T) {
	run := newTestRun()
	if err := parseJUnit(run, pytestJUnit); err != nil {
		t.Fatal(err)
	}
	if d := run.detail["test_mean.test_mean"].text; !strings.Contains(d, "assert 1.5 == 2") || !strings.Contains(d, "> ") && !strings.Contains(d, ">       assert") {
		t.Errorf("junit failure detail %q", d)
	}
	if _, ok := run.detail["test_sum.test_sum"]; ok {
		t.Error("a passing case kept output")
	}
	tap, err := parseTAP("TAP version 13\nok 1 - a\nnot ok 2 - mean\n  ---\n  message: 'want 2.5, got 2'\n  at: stats.test.js:7:3\n  ...\nok 3 - b\n1..3\n")
	if err != nil {
		t.Fatal(err)
	}
	if d := tap.detail["mean"].text; !strings.Contains(d, "want 2.5") || strings.Contains(d, "ok 3") {
		t.Errorf("tap failure detail %q", d)
	}
}

// TestRegressionRerunFlaky: a test that passed in red and fails in green
// is rerun once: passing then, it is labelled flaky and the check passes;
// failing again, it is a regression, listed first.
func TestRegressionRerunFlaky(t *testing.T) {
	root := writeTree(t, chattyTree)
	pkg := "example.com/stats"
	line := func(action, test string) string {
		return fmt.Sprintf(`{"Action":%q,"Package":%q,"Test":%q}`+"\n", action, pkg, test)
	}
	red := line("run", "TestMean") + line("fail", "TestMean") + line("run", "TestSum") + line("pass", "TestSum")
	flakyGreen := line("run", "TestMean") + line("pass", "TestMean") + line("run", "TestSum") + line("fail", "TestSum")
	green := line("run", "TestMean") + line("pass", "TestMean") + line("run", "TestSum") + line("pass", "TestSum")
	for _, tc := range []struct {
		name       string
		answers    []string
		wantPassed bool
		wantFlaky  []string
		wantRuns   int
	}{
		{"flaky", []string{red, flakyGreen, green}, true, []string{"TestSum (example.com/stats)"}, 3},
		{"regression", []string{red, flakyGreen, flakyGreen}, false, nil, 3},
		{"fixed", []string{red, green}, true, nil, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := 0
			sb := &scriptedSandbox{answer: func(*contain.Request) (*contain.Result, error) {
				out := tc.answers[min(n, len(tc.answers)-1)]
				n++
				code := 0
				if strings.Contains(out, `"fail"`) {
					code = 1
				}
				return &contain.Result{ExitCode: code, Output: []byte(out)}, nil
			}}
			rep, err := RunWith(context.Background(), Options{Sandbox: sb, Root: root, Changes: fix,
				Verify: contract.Verify{RedGreen: true, Checks: []contract.Check{{Name: "unit", Run: []string{"go", "test"}}}}})
			if err != nil {
				t.Fatal(err)
			}
			g := rep.Checks[len(rep.Checks)-1]
			if rep.Passed != tc.wantPassed || !cmp.Equal(g.Flaky, tc.wantFlaky) || n != tc.wantRuns {
				t.Errorf("passed %v flaky %v after %d runs; want %v %v %d", rep.Passed, g.Flaky, n, tc.wantPassed, tc.wantFlaky, tc.wantRuns)
			}
			if tc.name == "regression" && (len(g.Failures) != 1 || !g.Failures[0].Regression) {
				t.Errorf("failures %+v: want TestSum as a regression", g.Failures)
			}
			if tc.name == "flaky" && !strings.Contains(strings.Join(rep.Warnings, "\n"), "failed, then passed on rerun: flaky") {
				t.Errorf("warnings %q do not label the flaky test", rep.Warnings)
			}
		})
	}
}

// TestPreflightInWords: a red run that fails without a failing test says
// why in words; one with a failing test is the red state, no problem.
func TestPreflightInWords(t *testing.T) {
	root := writeTree(t, chattyTree)
	for _, tc := range []struct {
		name  string
		check contract.Check
		exit  int
		out   string
		want  string
	}{
		{"program missing", contract.Check{Name: "u", Run: []string{"nosuchtool", "test"}}, 127, "exec: nosuchtool: not found\n", "program not found: nosuchtool (exit 127)"},
		{"shell program missing", contract.Check{Name: "u", Shell: "mytool --all"}, 127, "sh: 1: mytool: not found\n", "program not found: mytool (exit 127)"},
		{"module missing", contract.Check{Name: "u", Run: []string{"python3", "-m", "pytest"}}, 1, "/usr/bin/python3: No module named pytest\n", "Python module pytest is missing"},
		{"build failure", contract.Check{Name: "u", Run: []string{"go", "test", "./..."}}, 1, "# example.com/stats\nstats.go:3:1: syntax error\nFAIL\texample.com/stats [build failed]\n", "the build failed before any test ran"},
		{"failing test", contract.Check{Name: "u", Run: []string{"go", "test", "./..."}}, 1, chattyEvents("example.com/stats", 3), ""},
		{"exit code only", contract.Check{Name: "u", Shell: "grep -q x y"}, 1, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sb := &scriptedSandbox{answer: func(*contain.Request) (*contain.Result, error) {
				return &contain.Result{ExitCode: tc.exit, Output: []byte(tc.out)}, nil
			}}
			got, err := RunRed(context.Background(), Options{Sandbox: sb, Root: root, Red: &RedCache{},
				Verify: contract.Verify{RedGreen: true, Checks: []contract.Check{tc.check}}})
			if err != nil {
				t.Fatal(err)
			}
			if p := got[0].Preflight; (tc.want == "") != (p == "") || !strings.Contains(p, tc.want) {
				t.Errorf("preflight %q, want it to say %q", p, tc.want)
			}
		})
	}
}
