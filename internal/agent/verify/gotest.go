package verify

import (
	"encoding/json"
	"io"
	"path"
	"strings"
)

// isGoTest reports whether argv runs `go test`.
func isGoTest(argv []string) bool {
	return len(argv) >= 2 && path.Base(argv[0]) == "go" && argv[1] == "test"
}

// isPytest reports whether argv runs pytest (pytest, py.test, pytest-3,
// or python -m pytest) without naming a JUnit report of its own.
func isPytest(argv []string) bool {
	if len(argv) == 0 {
		return false
	}
	base := path.Base(argv[0])
	runs := base == "pytest" || base == "py.test" || strings.HasPrefix(base, "pytest-")
	if strings.HasPrefix(base, "python") {
		for i := 1; i+1 < len(argv); i++ {
			if argv[i] == "-m" {
				runs = argv[i+1] == "pytest"
				break
			}
			if !strings.HasPrefix(argv[i], "-") {
				break
			}
			if argv[i] == "-X" || argv[i] == "-W" {
				i++ // the option's value
			}
		}
	}
	if !runs {
		return false
	}
	for _, a := range argv[1:] {
		if strings.HasPrefix(a, "--junitxml") || strings.HasPrefix(a, "--junit-xml") {
			return false
		}
	}
	return true
}

// goTestJSON returns argv with -json added after `go test`, and whether
// it will produce test2json events: not when the user turned them off
// with -json=false. Words after -args belong to the test binary.
func goTestJSON(argv []string) ([]string, bool) {
	for _, a := range argv[2:] {
		switch a {
		case "-args", "--args":
			return insertJSON(argv), true
		case "-json", "--json", "-json=true", "--json=true":
			return argv, true
		case "-json=false", "--json=false":
			return argv, false
		}
	}
	return insertJSON(argv), true
}

func insertJSON(argv []string) []string {
	return append([]string{argv[0], argv[1], "-json"}, argv[2:]...)
}

// goEvent is one test2json event (cmd/test2json).
type goEvent struct {
	Action  string `json:"Action"`
	Package string `json:"Package"`
	Test    string `json:"Test"`
	Output  string `json:"Output"`
}

// parseGoTest reads `go test -json` output held in memory: see readGoTest.
func parseGoTest(out string) (*testRun, string) {
	return readGoTest(strings.NewReader(out), 1<<30)
}

// readGoTest reads `go test -json` output as a stream: per-test results,
// each failing test's own output (test2json names the test on every
// output event, so a passing test's log lines never join a failure), and
// the text a person would have seen (the events' output and any line that
// is not an event, such as a build error on stderr), kept to limit bytes
// as head and tail. A test is named "TestName (import/path)" so that
// packages with tests of the same name stay apart. The results are nil
// when no event could be read. Memory is bounded by limit and the output
// of the tests running at once, whatever the length of the stream.
func readGoTest(r io.Reader, limit int) (*testRun, string) {
	text := newClip(limit/2, limit/2)
	run := newTestRun()
	open := map[string]*clipText{} // running tests' own output
	events := 0
	_ = eachLine(r, func(line string) {
		var ev goEvent
		if !strings.HasPrefix(line, "{") || json.Unmarshal([]byte(line), &ev) != nil || ev.Action == "" {
			text.WriteString(line + "\n")
			return
		}
		events++
		name := goTestName(ev)
		switch ev.Action {
		case "output", "build-output":
			text.WriteString(ev.Output)
			if ev.Test != "" {
				if o := open[name]; o != nil {
					o.WriteString(ev.Output)
				}
			}
		case "run":
			if ev.Test == "" {
				return
			}
			if strings.HasPrefix(ev.Test, "Benchmark") {
				// a benchmark reports no result of its own: it ran; a
				// failing one fails the package and the exit code
				run.set(name, StatusPass)
				return
			}
			run.start(name)
			open[name] = newClip(perTestHead, perTestTail)
		case "pass", "fail", "skip":
			if ev.Test == "" {
				return
			}
			run.set(name, Status(ev.Action))
			if o := open[name]; o != nil && ev.Action == "fail" {
				run.keep(name, o.String(), ev.Package)
			}
			delete(open, name)
		}
	})
	for _, name := range run.with(StatusIncomplete) {
		if o := open[name]; o != nil {
			run.keep(name, o.String(), pkgOfName(name))
		}
	}
	if events == 0 {
		return nil, text.String()
	}
	return run, text.String()
}

// pkgOfName is the import path in a "TestName (import/path)" name.
func pkgOfName(name string) string {
	if i := strings.LastIndex(name, " ("); i >= 0 && strings.HasSuffix(name, ")") {
		return name[i+2 : len(name)-1]
	}
	return ""
}

func goTestName(ev goEvent) string {
	if ev.Package == "" {
		return ev.Test
	}
	return ev.Test + " (" + ev.Package + ")"
}
