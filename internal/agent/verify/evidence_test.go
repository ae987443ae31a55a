package verify

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/ioh-lsp/ioh-lsp/internal/agent/contain"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/contract"
)

// goRed is real `go test -json` output (go1.26) of a package whose
// TestMean fails, TestSum passes and TestSkip skips.
const goRed = `{"Action":"start","Package":"example.com/stats"}
{"Action":"run","Package":"example.com/stats","Test":"TestMean"}
{"Action":"output","Package":"example.com/stats","Test":"TestMean","Output":"=== RUN   TestMean\n"}
{"Action":"output","Package":"example.com/stats","Test":"TestMean","Output":"    s_test.go:5: want 2\n"}
{"Action":"output","Package":"example.com/stats","Test":"TestMean","Output":"--- FAIL: TestMean (0.00s)\n"}
{"Action":"fail","Package":"example.com/stats","Test":"TestMean","Elapsed":0}
{"Action":"run","Package":"example.com/stats","Test":"TestSum"}
{"Action":"pass","Package":"example.com/stats","Test":"TestSum","Elapsed":0}
{"Action":"run","Package":"example.com/stats","Test":"TestSkip"}
{"Action":"skip","Package":"example.com/stats","Test":"TestSkip","Elapsed":0}
{"Action":"output","Package":"example.com/stats","Output":"FAIL\texample.com/stats\t0.003s\n"}
{"Action":"fail","Package":"example.com/stats","Elapsed":0.004}
`

func goGreen(results ...string) string {
	var b strings.Builder
	b.WriteString(`{"Action":"start","Package":"example.com/stats"}` + "\n")
	for i := 0; i+1 < len(results); i += 2 {
		b.WriteString(`{"Action":"` + results[i+1] + `","Package":"example.com/stats","Test":"` + results[i] + `"}` + "\n")
	}
	b.WriteString(`{"Action":"output","Package":"example.com/stats","Output":"ok  \texample.com/stats\t0.003s\n"}` + "\n")
	b.WriteString(`{"Action":"pass","Package":"example.com/stats","Elapsed":0.004}` + "\n")
	return b.String()
}

func TestGoTestJSONArgv(t *testing.T) {
	tests := []struct {
		in   []string
		want []string
		json bool
	}{
		{[]string{"go", "test", "./..."}, []string{"go", "test", "-json", "./..."}, true},
		{[]string{"/usr/local/go/bin/go", "test", "-run", "X", "."}, []string{"/usr/local/go/bin/go", "test", "-json", "-run", "X", "."}, true},
		{[]string{"go", "test", "-json", "./..."}, []string{"go", "test", "-json", "./..."}, true},
		{[]string{"go", "test", "-json=false", "./..."}, []string{"go", "test", "-json=false", "./..."}, false},
		{[]string{"go", "test", ".", "-args", "-json=false"}, []string{"go", "test", "-json", ".", "-args", "-json=false"}, true},
	}
	for _, tt := range tests {
		got, ok := goTestJSON(tt.in)
		if diff := cmp.Diff(got, tt.want); diff != "" || ok != tt.json {
			t.Errorf("goTestJSON(%q) = %q, %v; want %q, %v", tt.in, got, ok, tt.want, tt.json)
		}
	}
	for line, want := range map[string]string{
		"go test ./...":           "go test -json ./...",
		"  go   test -run X ./a ": "go test -json -run X ./a",
		"go test ./... | tee log": "",
		"GOFLAGS=-v go test ./..": "",
		"go vet ./...":            "",
	} {
		p := planCheck(contract.Check{Shell: line})
		if got := map[bool]string{true: p.shell, false: ""}[p.evidence == EvidenceGoTest]; got != want {
			t.Errorf("shell %q: planned %q (%s), want %q", line, p.shell, p.evidence, want)
		}
	}
	if isGoTest([]string{"go", "vet"}) || isGoTest([]string{"gotest"}) || !isGoTest([]string{"/x/go", "test"}) {
		t.Error("isGoTest misjudges")
	}
}

func TestParseGoTestKeepsTheTextAndTheResults(t *testing.T) {
	run, text := parseGoTest("# example.com/stats\nstats.go:3:1: syntax error\n" + goRed)
	if run == nil {
		t.Fatal("no results")
	}
	want := map[string]Status{"TestMean (example.com/stats)": StatusFail, "TestSum (example.com/stats)": StatusPass, "TestSkip (example.com/stats)": StatusSkip}
	if diff := cmp.Diff(run.status, want); diff != "" {
		t.Errorf("results (-got +want):\n%s", diff)
	}
	if !strings.Contains(text, "stats.go:3:1: syntax error\n") || !strings.Contains(text, "    s_test.go:5: want 2\n--- FAIL: TestMean") {
		t.Errorf("text:\n%s", text)
	}
	if run, _ := parseGoTest("not json at all\n"); run != nil {
		t.Error("results from output without events")
	}
}

func TestJudge(t *testing.T) {
	red, _ := parseGoTest(goRed)
	tests := []struct {
		name         string
		green        string
		red          *testRun
		wantProblems []string
		wantFixed    []string
	}{
		{"honest fix", goGreen("TestMean", "pass", "TestSum", "pass", "TestSkip", "skip"), red, nil, []string{"TestMean (example.com/stats)"}},
		{"failing test deleted or renamed", goGreen("TestSum", "pass", "TestMeanOld", "pass"), red,
			[]string{"TestMean (example.com/stats) did not run in the green phase"}, nil},
		{"failing test skipped", goGreen("TestMean", "skip", "TestSum", "pass"), red,
			[]string{"TestMean (example.com/stats) was skipped in the green phase"}, nil},
		{"passing test dropped", goGreen("TestMean", "pass"), red,
			[]string{"TestSum (example.com/stats) did not run in the green phase"}, []string{"TestMean (example.com/stats)"}},
		{"no test ran (TestMain exits 0)", goGreen(), red, []string{
			"no test ran in the green phase (2 ran before the change)",
			"TestMean (example.com/stats) did not run in the green phase",
			"TestSum (example.com/stats) did not run in the green phase",
		}, nil},
		{"zero tests without red/green", goGreen(), nil, []string{"no test ran"}, nil},
		{"still failing", goGreen("TestMean", "fail", "TestSum", "pass"), red, []string{"TestMean (example.com/stats) still fails"}, nil},
		{"exits inside the test", goGreen("TestMean", "run", "TestSum", "pass"), red, []string{"TestMean (example.com/stats) did not finish in the green phase"}, nil},
		{"benchmarks run", goGreen("TestMean", "pass", "TestSum", "pass", "BenchmarkMean", "run"), red, nil, []string{"TestMean (example.com/stats)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			green, _ := parseGoTest(tt.green)
			problems, fixed := judge(tt.red, green)
			if diff := cmp.Diff(problems, tt.wantProblems); diff != "" {
				t.Errorf("problems (-got +want):\n%s", diff)
			}
			if diff := cmp.Diff(fixed, tt.wantFixed); diff != "" {
				t.Errorf("fixed (-got +want):\n%s", diff)
			}
		})
	}
	if p, _ := judge(red, nil); len(p) != 1 {
		t.Errorf("unreadable green results: %v", p)
	}
}

// TestRunJudgesPerTest runs a go test check through RunWith with a
// scripted sandbox: the argv gets -json, the green phase fails when the
// test that failed before did not run, and passes with the fix.
func TestRunJudgesPerTest(t *testing.T) {
	for _, tt := range []struct {
		name       string
		green      string
		wantPassed bool
	}{
		{"fixed", goGreen("TestMean", "pass", "TestSum", "pass"), true},
		{"TestMean gone", goGreen("TestSum", "pass"), false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			sb := &scriptedSandbox{answer: func(req *contain.Request) (*contain.Result, error) {
				if req.Changes == nil {
					return &contain.Result{ExitCode: 1, Output: []byte(goRed)}, nil
				}
				return &contain.Result{Output: []byte(tt.green)}, nil
			}}
			v := contract.Verify{RedGreen: true, Checks: []contract.Check{{Name: "unit", Run: []string{"go", "test", "./..."}}}}
			rep, err := Run(context.Background(), sb, "/ws", fix, v, nil)
			if err != nil {
				t.Fatal(err)
			}
			if got := sb.reqs[0].Argv; strings.Join(got, " ") != "go test -json ./..." {
				t.Errorf("argv %q", got)
			}
			g := rep.Checks[1]
			if rep.Passed != tt.wantPassed || g.Passed != tt.wantPassed || g.Evidence != EvidenceGoTest {
				t.Errorf("passed %v, green %+v", rep.Passed, g)
			}
			if tt.wantPassed && (len(g.Fixed) != 1 || g.Tests == nil || g.Tests.Ran != 2) {
				t.Errorf("evidence of the fix: fixed %v, tests %+v", g.Fixed, g.Tests)
			}
			if !tt.wantPassed && !strings.Contains(strings.Join(g.Problems, "\n"), "TestMean (example.com/stats) did not run in the green phase") {
				t.Errorf("problems %v", g.Problems)
			}
			if red := rep.Checks[0]; red.Tests == nil || len(red.Tests.Failed) != 1 || red.Output == goRed {
				t.Errorf("red summary %+v; output should be the events' text", red.Tests)
			}
		})
	}
}

const pytestJUnit = `<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="pytest" errors="0" failures="1" skipped="1" tests="3" time="0.02" timestamp="2026-11-30T15:00:00" hostname="h"><testcase classname="test_mean" name="test_mean" time="0.001"><failure message="assert 1.5 == 2">def test_mean():
&gt;       assert mean([1, 2, 3]) == 2
E       assert 1.5 == 2</failure></testcase><testcase classname="test_sum" name="test_sum" time="0.000" /><testcase classname="test_sum" name="test_later" time="0.000"><skipped type="pytest.skip" message="later">test_sum.py:5: later</skipped></testcase></testsuite></testsuites>`

// surefire writes one file per class with a <testsuite> root.
const surefireJUnit = `<?xml version="1.0" encoding="UTF-8"?>
<testsuite xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" name="com.example.StatsTest" time="0.03" tests="2" errors="1" skipped="0" failures="0">
  <properties><property name="java.version" value="21"/></properties>
  <testcase name="mean" classname="com.example.StatsTest" time="0.01"><error message="boom" type="java.lang.IllegalStateException">trace</error></testcase>
  <testcase name="sum" classname="com.example.StatsTest" time="0"/>
</testsuite>`

func TestParseJUnit(t *testing.T) {
	run := newTestRun()
	if err := parseJUnit(run, pytestJUnit); err != nil {
		t.Fatal(err)
	}
	if err := parseJUnit(run, surefireJUnit); err != nil {
		t.Fatal(err)
	}
	want := map[string]Status{
		"test_mean.test_mean": StatusFail, "test_sum.test_sum": StatusPass, "test_sum.test_later": StatusSkip,
		"com.example.StatsTest.mean": StatusFail, "com.example.StatsTest.sum": StatusPass,
	}
	if diff := cmp.Diff(run.status, want); diff != "" {
		t.Errorf("results (-got +want):\n%s", diff)
	}
	for _, bad := range []string{"<testsuite><testcase name='x'>", "not xml", "<html></html>"} {
		if err := parseJUnit(newTestRun(), bad); err == nil {
			t.Errorf("parseJUnit(%q): no error", bad)
		}
	}
}

func TestReportTravelsOnTheOutput(t *testing.T) {
	argv := withReport([]string{"pytest", "--junitxml=r.xml"}, "", "r.xml")
	if argv[0] != "/bin/sh" || argv[3] != reportTag || argv[4] != "r.xml" || argv[5] != "argv" || argv[6] != "pytest" {
		t.Fatalf("wrapped argv %q", argv)
	}
	first, second := withReport(nil, "make test", "r.xml"), withReport(nil, "make test", "r.xml")
	if strings.Join(first, " ") != strings.Join(second, " ") {
		t.Error("the wrapper's command line holds something that varies: nothing in it is secret from the sandbox")
	}
	out := "collected 3 items\nF..\n" + reportBlock(map[string]string{"r.xml": pytestJUnit})
	text, files, complete := splitReport(out)
	if text != "collected 3 items\nF..\n" || !complete || files["r.xml"] != pytestJUnit || len(files) != 1 {
		t.Errorf("split: text %q complete %v files %v", text, complete, files)
	}
	for _, cut := range []int{1, 20, len(out) - len(text) - 5} {
		if _, _, complete := splitReport(out[:len(out)-cut]); complete {
			t.Errorf("a report cut by %d bytes counts as complete", cut)
		}
	}
	if _, _, complete := splitReport(out + "late output\n"); complete {
		t.Error("output after the trailer leaves the reports readable")
	}
	if run, why := readJUnit(map[string]string{}, true, "r.xml"); run != nil || why != "it wrote no JUnit report at r.xml" {
		t.Errorf("no report: %v %q", run, why)
	}
}

// reportBlock is what reportScript prints after a command that wrote
// files (sorted by name, as the shell's glob expands).
func reportBlock(files map[string]string) string {
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	var b strings.Builder
	for _, n := range names {
		fmt.Fprintf(&b, "%s file %d %s\n%s", reportTag, len(files[n]), n, files[n])
	}
	return fmt.Sprintf("%s\n%s end %d\n", b.String(), reportTag, b.Len())
}

// TestForgedReportSectionIsOnlyOutput runs the real wrapper script with
// /bin/sh: a command that prints report sections and trailers of its own
// (as a test that read the wrapper's command line could) gets them shown
// as output, and only the file it wrote counts; names with spaces and
// multi-byte characters are framed by their bytes.
func TestForgedReportSectionIsOnlyOutput(t *testing.T) {
	dir := t.TempDir()
	forged := reportBlock(map[string]string{"out/r.xml": "<testsuite><testcase name=\"mean\"/></testsuite>"})
	cmd := "mkdir -p out; printf '%s' \"$FORGED\"; printf '<testsuite><testcase name=\"mean\"><failure/></testcase></testsuite>' > 'out/r é.xml'; printf '%s' \"$FORGED\"; exit 3"
	argv := withReport(nil, cmd, "out/*.xml")
	shells := []string{argv[0]}
	if bash, err := exec.LookPath("bash"); err == nil {
		shells = append(shells, bash) // /bin/sh is bash on some systems; both under a UTF-8 locale
	}
	for _, sh := range shells {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		c := exec.CommandContext(ctx, sh, argv[1:]...)
		c.Dir = dir
		c.Env = append(os.Environ(), "FORGED="+forged, "LANG=C.UTF-8", "LC_ALL=C.UTF-8")
		out, err := c.CombinedOutput()
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 3 {
			t.Fatalf("%s wrapper: %v (want the command's exit status 3)\n%s", sh, err, out)
		}
		text, files, complete := splitReport(string(out))
		want := map[string]string{"out/r é.xml": `<testsuite><testcase name="mean"><failure/></testcase></testsuite>`}
		if !complete || !cmp.Equal(files, want) {
			t.Fatalf("%s: complete %v, files %q, want %q\noutput:\n%s", sh, complete, files, want, out)
		}
		if text != forged+forged {
			t.Errorf("%s: the command's own output %q, want the two forged blocks as text", sh, text)
		}
		run, why := readJUnit(files, complete, "out/*.xml")
		if run == nil || run.status["mean"] != StatusFail {
			t.Errorf("%s: results %v (%s): the forged pass counted", sh, run, why)
		}
	}
}

// nodeTAP is node 20's `node --test --test-reporter=tap` output shape.
const nodeTAP = `TAP version 13
# Subtest: stats
    # Subtest: mean
    not ok 1 - mean
      ---
      duration_ms: 0.7
      failureType: 'testCodeFailure'
      ...
    # Subtest: sum
    ok 2 - sum
      ---
      duration_ms: 0.1
      ...
    # Subtest: later
    ok 3 - later # SKIP not yet
    1..3
not ok 1 - stats
  ---
  duration_ms: 2.1
  ...
1..1
# tests 3
# pass 1
# fail 1
`

func TestParseTAP(t *testing.T) {
	run, err := parseTAP(nodeTAP)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]Status{"stats > mean": StatusFail, "stats > sum": StatusPass, "stats > later": StatusSkip, "stats": StatusFail}
	if diff := cmp.Diff(run.status, want); diff != "" {
		t.Errorf("results (-got +want):\n%s", diff)
	}
	plain, err := parseTAP("1..3\nok 1 - a\nnot ok 2 b # TODO later\nok 3\n")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(plain.status, map[string]Status{"a": StatusPass, "b": StatusSkip, "test 3": StatusPass}); diff != "" {
		t.Errorf("plain TAP (-got +want):\n%s", diff)
	}
	for in, msg := range map[string]string{
		"1..3\nok 1 - a\n":            "tap: the plan promises 3 tests, 1 reported",
		"ok 1 - a\nBail out! no db\n": "tap: Bail out! no db",
		"PASS everything\n":           "tap: no test results in the output",
	} {
		if _, err := parseTAP(in); err == nil || err.Error() != msg {
			t.Errorf("parseTAP(%q) = %v, want %q", in, err, msg)
		}
	}
}

func TestDescribe(t *testing.T) {
	tests := []struct {
		c    CheckResult
		want string
	}{
		{CheckResult{Name: "lint", Passed: true, Evidence: EvidenceExitCode}, "lint: passed (exit code only)"},
		{CheckResult{Name: "lint", ExitCode: 2}, "lint: FAILED (exit 2) (exit code only)"},
		{CheckResult{Name: "unit", Passed: true, Evidence: EvidenceGoTest, Tests: &TestSummary{Ran: 2, Passed: 2, Skipped: 1}, Fixed: []string{"TestMean (s)"}},
			"unit: passed (go test -json, 2 tests ran, 1 skipped); failed before, pass now: TestMean (s)"},
		{CheckResult{Name: "unit", Evidence: EvidenceGoTest, Tests: &TestSummary{Ran: 1, Passed: 1}, Problems: []string{"TestMean (s) did not run in the green phase"}},
			"unit: FAILED (go test -json, 1 test ran): TestMean (s) did not run in the green phase"},
		{CheckResult{Name: "py", ExitCode: 1, Evidence: EvidenceJUnit, Tests: &TestSummary{Ran: 2, Failed: []string{"t.test_mean"}}},
			"py: FAILED (exit 1) (junit, 2 tests ran): failing t.test_mean"},
	}
	for _, tt := range tests {
		if got := tt.c.Describe(); got != tt.want {
			t.Errorf("Describe() = %q\nwant        %q", got, tt.want)
		}
	}
}

func TestPytestGetsAReport(t *testing.T) {
	for argv, want := range map[string]bool{
		"pytest -q":                          true,
		"/usr/bin/pytest-3 tests":            true,
		"python3 -m pytest -q":               true,
		"python3 -X dev -m pytest":           true,
		"python3 -m pytest --junitxml=r.xml": false,
		"python3 run_tests.py -m pytest":     false,
		"python3 -m unittest":                false,
	} {
		if got := isPytest(strings.Fields(argv)); got != want {
			t.Errorf("isPytest(%q) = %v, want %v", argv, got, want)
		}
	}
	p := planCheck(contract.Check{Run: []string{"pytest", "-q"}})
	if p.evidence != EvidenceJUnit || !strings.HasPrefix(p.pattern, "/tmp/ioh-pytest-") || p.argv[len(p.argv)-1] != "--junitxml="+p.pattern {
		t.Errorf("plan %+v", p)
	}
}
