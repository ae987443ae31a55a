package verify

import (
	"bufio"
	"encoding/json"
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

// parseGoTest reads `go test -json` output: per-test results and the text
// a person would have seen (the events' output and any line that is not
// an event, such as a build error on stderr). A test is named
// "TestName (import/path)" so that packages with tests of the same name
// stay apart. The results are nil when no event could be read.
func parseGoTest(out string) (*testRun, string) {
	var text strings.Builder
	run := newTestRun()
	events := 0
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(make([]byte, 0, 64*1024), 4<<20)
	for sc.Scan() {
		line := sc.Text()
		var ev goEvent
		if !strings.HasPrefix(line, "{") || json.Unmarshal([]byte(line), &ev) != nil || ev.Action == "" {
			text.WriteString(line)
			text.WriteByte('\n')
			continue
		}
		events++
		switch ev.Action {
		case "output", "build-output":
			text.WriteString(ev.Output)
		case "run":
			if ev.Test != "" {
				if strings.HasPrefix(ev.Test, "Benchmark") {
					// a benchmark reports no result of its own: it ran; a
					// failing one fails the package and the exit code
					run.set(goTestName(ev), StatusPass)
				} else {
					run.start(goTestName(ev))
				}
			}
		case "pass", "fail", "skip":
			if ev.Test != "" {
				run.set(goTestName(ev), Status(ev.Action))
			}
		}
	}
	if events == 0 {
		return nil, text.String()
	}
	return run, text.String()
}

func goTestName(ev goEvent) string {
	if ev.Package == "" {
		return ev.Test
	}
	return ev.Test + " (" + ev.Package + ")"
}
