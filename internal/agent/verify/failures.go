package verify

import (
	"fmt"
	"path"
	"strings"
)

// failuresOf lists the failing tests of a run with their own output and
// locations, regressions (passed in red, fail now) first; at most
// maxNames, and how many more failed.
func failuresOf(run, red *testRun, o ParseOptions) ([]Failure, int) {
	if run == nil {
		return nil, 0
	}
	var regressions, others []Failure
	for _, name := range run.failures() {
		f := Failure{Test: name, Status: run.status[name]}
		if red != nil && red.status[name] == StatusPass {
			f.Regression = true
		}
		if d, ok := run.detail[name]; ok {
			f.Output = d.text
			f.Locations = detailLocations(d, name, o)
		}
		if f.Regression {
			regressions = append(regressions, f)
		} else {
			others = append(others, f)
		}
	}
	all := append(regressions, others...)
	if len(all) > maxNames {
		return all[:maxNames], len(all) - maxNames
	}
	return all, 0
}

// detailLocations are the locations in one failing test's own output. A
// Go test's paths are relative to its package's directory: the package
// line that `go test` prints after it says which.
func detailLocations(d testDetail, test string, o ParseOptions) []Location {
	text := d.text
	if d.pkg != "" {
		if !strings.Contains(text, "--- FAIL:") {
			text += "\n--- FAIL: " + path.Base(test) + "\n" // an unfinished test
		}
		text += "\nFAIL\t" + d.pkg + "\n"
	}
	locs := Parse(text, o)
	for i := range locs {
		locs[i].Test = test
	}
	return locs
}

// locationsOf are a run's locations: its failing tests' own, then those
// in the text outside them (compiler and vet errors, a crash). The text
// parser keeps a Go test's messages only when the test fails, so a
// passing test's log line never becomes one.
func locationsOf(failures []Failure, text string, o ParseOptions) []Location {
	var out []Location
	seen := map[Location]bool{}
	for _, f := range failures {
		for _, l := range f.Locations {
			out = append(out, l)
			l.Test = ""
			seen[l] = true
		}
	}
	for _, l := range Parse(text, o) {
		if !seen[l] {
			out = append(out, l)
		}
	}
	return out
}

// preflight says in words why a red-phase run failed without a failing
// test, "" when a test failed (the red state a change is to fix). Exit
// code only checks are preflight problems only when the program or a
// module is missing.
func preflight(c CheckResult, p plan, run *testRun, unreadable string) string {
	if run != nil && len(run.failures()) > 0 {
		return ""
	}
	tail := lastLines(c.Output, 6, 600)
	if tail != "" {
		tail = "; its output ends:\n" + tail
	}
	switch m := missingModule(c.Output); {
	case m != "":
		return fmt.Sprintf("check %s cannot run its tests: Python module %s is missing (No module named %s); install it or change the check's command%s", c.Name, m, m, tail)
	case c.ExitCode == 127 || strings.Contains(c.Output, ": command not found") || strings.Contains(c.Output, "executable file not found"):
		return fmt.Sprintf("check %s cannot run: program not found: %s (exit %d); install it or fix the check's command in the contract%s", c.Name, program(p), c.ExitCode, tail)
	case c.ExitCode == 126:
		return fmt.Sprintf("check %s cannot run: %s is not executable (exit 126)%s", c.Name, program(p), tail)
	case p.evidence == EvidenceExitCode:
		return ""
	case c.CapHit != "" || c.Signal != "":
		return fmt.Sprintf("check %s was stopped by %s before any test failed%s", c.Name, cause(c), tail)
	case strings.Contains(c.Output, "[build failed]") || strings.Contains(c.Output, "[setup failed]"):
		return fmt.Sprintf("check %s: the build failed before any test ran (exit %d)%s", c.Name, c.ExitCode, tail)
	case unreadable != "":
		return fmt.Sprintf("check %s failed (exit %d) without per-test results: %s%s", c.Name, c.ExitCode, unreadable, tail)
	}
	return fmt.Sprintf("check %s failed (exit %d) without a failing test: a build or setup failure%s", c.Name, c.ExitCode, tail)
}

var noModuleRe = &lazyRE{pat: `No module named '?([\w.]+)'?`}

func missingModule(out string) string {
	if m := noModuleRe.FindStringSubmatch(out); m != nil {
		return m[1]
	}
	return ""
}

// program is the command a check runs: argv[0], or the shell line's first
// word (the argv of a report wrapper's own command).
func program(p plan) string {
	argv, line := p.argv, p.shell
	if len(argv) > 6 && argv[0] == "/bin/sh" && argv[3] == reportTag {
		// /bin/sh -c SCRIPT ioh-report PATTERN MODE command…
		if argv[5] == "shell" {
			line = argv[6]
		}
		argv = argv[6:]
	}
	if len(argv) > 0 && line == "" {
		return argv[0]
	}
	if f := strings.Fields(line); len(f) > 0 {
		return f[0]
	}
	return "?"
}

// lastLines is the end of s: at most n lines and max bytes.
func lastLines(s string, n, max int) string {
	s = strings.TrimRight(s, "\n")
	if len(s) > max {
		s = s[len(s)-max:]
		if i := strings.IndexByte(s, '\n'); i >= 0 {
			s = s[i+1:]
		}
	}
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
