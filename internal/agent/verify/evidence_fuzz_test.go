package verify

import (
	"strings"
	"testing"
)

// FuzzEvidence feeds arbitrary check output to the per-test readers (go
// test -json, TAP, JUnit, the report splitter): they must never panic,
// every result they return has a name and a known status, and judging a
// run against itself never names a test as fixed.
func FuzzEvidence(f *testing.F) {
	for _, s := range []string{goRed, goGreen("TestMean", "pass"), nodeTAP, pytestJUnit, surefireJUnit,
		"ioh-report file 12 r.xml\n<testsuite/>\nioh-report end 35\n", "1..2\nok 1\nnot ok 2 # skip\n", "{\"Action\":\"pass\"}\n{"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, out string) {
		check := func(run *testRun) {
			if run == nil {
				return
			}
			for name, st := range run.status {
				if st != StatusPass && st != StatusFail && st != StatusSkip && st != StatusIncomplete {
					t.Fatalf("test %q has status %q", name, st)
				}
			}
			if _, fixed := judge(run, run); len(fixed) != 0 {
				t.Fatalf("a run judged against itself fixed %v", fixed)
			}
		}
		run, _ := parseGoTest(out)
		check(run)
		if run, err := parseTAP(out); err == nil {
			check(run)
		}
		junit := newTestRun()
		if parseJUnit(junit, out) == nil {
			check(junit)
		}
		text, files, _ := splitReport(out)
		if !strings.HasPrefix(out, text) {
			t.Fatalf("split text %q is not a prefix of the output", text)
		}
		for name := range files {
			if strings.Contains(name, "\n") {
				t.Fatalf("report file name %q spans lines", name)
			}
		}
		// whatever the command printed, the reports read are exactly the
		// ones the wrapper appended after it
		real := map[string]string{"r.xml": pytestJUnit, "b c.xml": out}
		text, files, complete := splitReport(out + reportBlock(real))
		if !complete || text != out || len(files) != len(real) || files["r.xml"] != pytestJUnit || files["b c.xml"] != out {
			t.Fatalf("after output %q: complete %v, text %q, files %q", out, complete, text, files)
		}
	})
}
