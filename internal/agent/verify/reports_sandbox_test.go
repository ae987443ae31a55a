package verify_test

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/ioh-lsp/ioh-lsp/internal/agent/contract"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/verify"
	"github.com/ioh-lsp/ioh-lsp/internal/workspace"
)

// shellRunner is a tiny test runner in sh: it runs each case, prints a
// line, and writes a JUnit report to out/report.xml.
const shellRunner = `mkdir -p out
cases=""; fails=0; n=0
for t in tests/*.sh; do
  name=$(basename "$t" .sh); n=$((n+1))
  if sh "$t" >/dev/null 2>&1; then echo "PASS $name"; cases="$cases<testcase classname=\"shell\" name=\"$name\"/>"
  else echo "FAIL $name"; fails=$((fails+1)); cases="$cases<testcase classname=\"shell\" name=\"$name\"><failure message=\"exit\"/></testcase>"; fi
done
printf '<?xml version="1.0"?><testsuite name="shell" tests="%d" failures="%d">%s</testsuite>\n' "$n" "$fails" "$cases" > out/report.xml
[ "$fails" -eq 0 ]
`

func mustVerify(t *testing.T, root string, changes []workspace.Change, v contract.Verify) *verify.Report {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	rep, err := verify.Run(ctx, realSandbox(t), root, changes, v, nil)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

func green(rep *verify.Report) verify.CheckResult {
	return rep.Checks[len(rep.Checks)-1]
}

// TestJUnitFromAShellRunner: a shell runner's JUnit report (named by a
// glob) comes back from the sandbox; the fix is verified at test level,
// a stale report committed to the workspace does not count, and deleting
// the failing case fails as a test that did not run.
func TestJUnitFromAShellRunner(t *testing.T) {
	stale := `<testsuite><testcase classname="shell" name="mean"/><testcase classname="shell" name="sum"/></testsuite>`
	root := tree(t, map[string]string{
		"run-tests.sh": shellRunner, "value.txt": "1.5\n", "out/old.xml": stale,
		"tests/mean.sh": "grep -qx 2 value.txt\n", "tests/sum.sh": "true\n",
	})
	v := contract.Verify{RedGreen: true, Checks: []contract.Check{{Name: "cases", Run: []string{"sh", "run-tests.sh"}, Report: "junit:out/*.xml"}}}
	fix := []workspace.Change{{Path: "value.txt", Op: workspace.OpModify, Content: []byte("2\n"), Mode: 0o644}}
	rep := mustVerify(t, root, fix, v)
	g := green(rep)
	if !rep.Verified() || g.Evidence != verify.EvidenceJUnit || strings.Join(g.Fixed, ",") != "shell.mean" || g.Tests.Ran != 2 {
		t.Fatalf("honest fix: verified %v, %s\n%s", rep.Verified(), g.Describe(), g.Output)
	}
	if red := rep.Checks[0]; red.Tests == nil || strings.Join(red.Tests.Failed, ",") != "shell.mean" {
		t.Errorf("red phase: %s (the stale report must not count)", red.Describe())
	}
	if strings.Contains(g.Output, "testsuite") || !strings.Contains(g.Output, "PASS mean") {
		t.Errorf("output should be the runner's text without the report:\n%s", g.Output)
	}

	cheat := []workspace.Change{{Path: "tests/mean.sh", Op: workspace.OpDelete}}
	rep = mustVerify(t, root, cheat, v)
	if g := green(rep); rep.Verified() || g.ExitCode != 0 || !strings.Contains(strings.Join(g.Problems, "\n"), "shell.mean did not run in the green phase") {
		t.Errorf("deleted case: verified %v, exit %d, %s", rep.Verified(), g.ExitCode, g.Describe())
	}
	if !rep.NeedsHuman() {
		t.Error("deleting a test file is not marked as touching the checks")
	}
}

// TestNodeTestRunnerReports: node's built-in test runner, read through
// its JUnit reporter and through TAP on its output.
func TestNodeTestRunnerReports(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("node not installed")
		}
		t.Skip("node not installed")
	}
	root := tree(t, map[string]string{
		"stats.js": "exports.mean = (xs) => xs.reduce((a, b) => a + b, 0) / (xs.length - 1);\n",
		"stats.test.js": `const test = require('node:test');
const assert = require('node:assert');
const { mean } = require('./stats.js');
test('mean', () => { assert.strictEqual(mean([1, 2, 3]), 2); });
test('sum', () => { assert.strictEqual(1 + 2, 3); });
`,
	})
	fix := []workspace.Change{{Path: "stats.js", Op: workspace.OpModify, Content: []byte("exports.mean = (xs) => xs.reduce((a, b) => a + b, 0) / xs.length;\n"), Mode: 0o644}}
	skip := []workspace.Change{{Path: "stats.test.js", Op: workspace.OpModify, Mode: 0o644, Content: []byte(`const test = require('node:test');
test('mean', { skip: 'flaky' }, () => {});
test('sum', () => {});
`)}}
	for _, tt := range []struct {
		name, report string
		argv         []string
		fixed        string
	}{
		{"junit", "junit:report.xml", []string{node, "--test", "--test-reporter=junit", "--test-reporter-destination=report.xml", "stats.test.js"}, "test.mean"},
		{"tap", "tap", []string{node, "--test", "--test-reporter=tap", "stats.test.js"}, "mean"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			v := contract.Verify{RedGreen: true, Checks: []contract.Check{{Name: "node", Run: tt.argv, Report: tt.report}}}
			rep := mustVerify(t, root, fix, v)
			if g := green(rep); !rep.Verified() || strings.Join(g.Fixed, ",") != tt.fixed {
				t.Errorf("fix: verified %v, %s\n%s", rep.Verified(), g.Describe(), g.Output)
			}
			rep = mustVerify(t, root, skip, v)
			if g := green(rep); rep.Verified() || g.ExitCode != 0 || !strings.Contains(strings.Join(g.Problems, "\n"), tt.fixed+" was skipped in the green phase") {
				t.Errorf("skipped test: verified %v, exit %d, %s", rep.Verified(), g.ExitCode, g.Describe())
			}
		})
	}
}

// TestPytestIsReadPerTestWithoutAReportKey: a pytest check that names no
// report gets one in the sandbox's private /tmp and is judged per test.
func TestPytestIsReadPerTestWithoutAReportKey(t *testing.T) {
	py := ""
	for _, cand := range []string{"/usr/bin/python3", "python3"} {
		if p, err := exec.LookPath(cand); err == nil && exec.Command(p, "-c", "import pytest").Run() == nil {
			py = p
			break
		}
	}
	if py == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("no python3 with pytest (install python3-pytest)")
		}
		t.Skip("no python3 with pytest")
	}
	root := tree(t, map[string]string{
		"stats.py":     "def mean(xs):\n    return sum(xs) / (len(xs) - 1)\n",
		"test_mean.py": "from stats import mean\n\n\ndef test_mean():\n    assert mean([1, 2, 3]) == 2\n",
		"test_sum.py":  "def test_sum():\n    assert sum([1, 2]) == 3\n",
	})
	v := contract.Verify{RedGreen: true, Checks: []contract.Check{{Name: "py", Run: []string{py, "-m", "pytest", "-q", "-p", "no:cacheprovider"}}}}
	fix := []workspace.Change{{Path: "stats.py", Op: workspace.OpModify, Content: []byte("def mean(xs):\n    return sum(xs) / len(xs)\n"), Mode: 0o644}}
	rep := mustVerify(t, root, fix, v)
	if g := green(rep); !rep.Verified() || g.Evidence != verify.EvidenceJUnit || strings.Join(g.Fixed, ",") != "test_mean.test_mean" {
		t.Errorf("fix: verified %v, %s\n%s", rep.Verified(), g.Describe(), g.Output)
	}
	rep = mustVerify(t, root, []workspace.Change{{Path: "test_mean.py", Op: workspace.OpDelete}}, v)
	if g := green(rep); rep.Verified() || g.ExitCode != 0 || !strings.Contains(strings.Join(g.Problems, "\n"), "test_mean.test_mean did not run in the green phase") {
		t.Errorf("deleted test: verified %v, exit %d, %s", rep.Verified(), g.ExitCode, g.Describe())
	}
}

// TestReportAfterStandardError: a check that writes much to standard
// error before its report still has the report read whole (the sandbox
// reads stdout and stderr on separate pipes; the wrapper joins them so
// nothing the command wrote can land after the report's trailer).
func TestReportAfterStandardError(t *testing.T) {
	root := tree(t, map[string]string{"run.sh": `i=0
while [ $i -lt 3000 ]; do echo "warning: line $i of the runner's chatter on stderr" >&2; i=$((i+1)); done
printf '<testsuite><testcase classname="sh" name="a"/><testcase classname="sh" name="b"/></testsuite>' > r.xml
echo done
`})
	v := contract.Verify{Checks: []contract.Check{{Name: "noisy", Run: []string{"sh", "run.sh"}, Report: "junit:r.xml"}}}
	rep := mustVerify(t, root, nil, v)
	if g := green(rep); !g.Passed || g.Tests == nil || g.Tests.Ran != 2 || !strings.Contains(g.Output, "line 2999") {
		t.Fatalf("%s\n%.300s", g.Describe(), g.Output)
	}
}
