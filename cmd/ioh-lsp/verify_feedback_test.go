package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// These tests drive the real CLI harness with the real sandbox and a
// scripted model (chatServer, the chat completions wire format) over
// contracts whose checks fail before the change, and read what the model
// was sent.

// feedbackWorld is a budgetWorld with the host's Go caches (so `go test`
// in the sandbox does not rebuild the standard library) and a scripted
// model answering turns.
func feedbackWorld(t *testing.T, files map[string]string, turns []string, config ...string) (*budgetWorld, *chatServer) {
	t.Helper()
	srv, cs := newChatServer(t, turns, nil)
	w := newBudgetWorld(t, files)
	for _, k := range []string{"GOCACHE", "GOMODCACHE"} {
		out, err := exec.Command("go", "env", k).Output()
		if err != nil {
			t.Fatalf("go env %s: %v", k, err)
		}
		w.env[k] = strings.TrimSpace(string(out))
	}
	w.env["OPENROUTER_API_KEY"] = "sk-or-test-123"
	w.userConfig(fmt.Sprintf("model: {provider: openrouter, name: vendor/scripted, base_url: %q}\n", srv.URL+"/api/v1") + strings.Join(config, ""))
	return w, cs
}

// firstUserText is the first user message of request i.
func (cs *chatServer) userText(i int) string {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if i >= len(cs.bodies) {
		return ""
	}
	for _, m := range cs.bodies[i]["messages"].([]any) {
		mm := m.(map[string]any)
		if mm["role"] == "user" {
			b, _ := json.Marshal(mm["content"])
			var s string
			if json.Unmarshal(b, &s) != nil {
				s = string(b)
			}
			return s
		}
	}
	return ""
}

// toolResults are the tool messages of request i.
func (cs *chatServer) toolResults(i int) []string {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	var out []string
	if i >= len(cs.bodies) {
		return nil
	}
	for _, m := range cs.bodies[i]["messages"].([]any) {
		mm := m.(map[string]any)
		if mm["role"] == "tool" {
			s, _ := mm["content"].(string)
			out = append(out, s)
		}
	}
	return out
}

func call(name string, args map[string]any) string {
	a, _ := json.Marshal(args)
	b, _ := json.Marshal(map[string]any{"name": name, "arguments": string(a)})
	return string(b)
}

// chattyStats is a Go module whose 300 passing tests each log a line and
// whose TestMean fails ("want 2.5") until Mean divides in floating point.
func chattyStats() map[string]string {
	var tests strings.Builder
	tests.WriteString("package stats\n\nimport \"testing\"\n\n")
	for i := range 300 {
		fmt.Fprintf(&tests, "func TestChatty%03d(t *testing.T) { t.Log(\"step %d ok\") }\n", i, i)
	}
	return map[string]string{
		"go.mod":         "module example.com/stats\n\ngo 1.22\n",
		"stats.go":       "package stats\n\n// Mean is the average of xs.\nfunc Mean(xs []int) float64 {\n\ts := 0\n\tfor _, x := range xs {\n\t\ts += x\n\t}\n\treturn float64(s / len(xs))\n}\n",
		"stats_test.go":  "package stats\n\nimport \"testing\"\n\nfunc TestMean(t *testing.T) {\n\tif got := Mean([]int{1, 2, 3, 4}); got != 2.5 {\n\t\tt.Errorf(\"Mean([1 2 3 4]) = %v, want 2.5\", got)\n\t}\n}\n",
		"chatty_test.go": tests.String(),
		"task.ioh.yaml":  "version: 1\ngoal: \"make the checks pass\"\nverify:\n  red_green: true\n  checks:\n    - name: unit\n      run: [go, test, ./...]\n",
	}
}

// TestRedPhaseFirstAndFeedbackGo: the first request already names the
// failing TestMean with its location and message (the red phase ran
// before the first model call); a finish without the fix gets ≤ 4 KB of
// feedback with the failing test's file:line and "want 2.5" and no
// passing test's log line; the fix is verified and applied.
func TestRedPhaseFirstAndFeedbackGo(t *testing.T) {
	w, cs := feedbackWorld(t, chattyStats(), []string{
		call("finish", map[string]any{"summary": "nothing yet"}),
		call("edit_file", map[string]any{"path": "stats.go", "old": "float64(s / len(xs))", "new": "float64(s) / float64(len(xs))"}),
		call("finish", map[string]any{"summary": "fixed Mean"}),
	})
	code, _, errOut := w.cli("run", "task.ioh.yaml", "--approve", "auto")
	if code != exitOK {
		t.Fatalf("run: exit %d: %s", code, errOut)
	}
	first := cs.userText(0)
	if os.Getenv("IOH_SHOW") != "" {
		t.Logf("first request:\n%s\nfeedback:\n%s", first, cs.toolResults(1))
	}
	for _, want := range []string{"TestMean (example.com/stats)", "stats_test.go:7", "want 2.5"} {
		if !strings.Contains(first, want) {
			t.Errorf("the first request does not name %q:\n%s", want, first)
		}
	}
	if strings.Contains(first, "step 1 ok") {
		t.Errorf("the first request carries a passing test's log line:\n%s", first)
	}
	res := cs.toolResults(1)
	if len(res) != 1 {
		t.Fatalf("request 2 tool results %q", res)
	}
	fb := res[0]
	t.Logf("feedback of the failed finish: %d bytes (34 KB before, without the assertion)", len(fb))
	if len(fb) > 4096 || !strings.Contains(fb, "stats_test.go:7") || !strings.Contains(fb, "want 2.5") || strings.Contains(fb, " ok") && strings.Contains(fb, "step ") {
		t.Errorf("feedback (%d bytes):\n%s", len(fb), fb)
	}
	if got, _ := os.ReadFile(w.dir + "/stats.go"); !strings.Contains(string(got), "float64(s) / float64(len(xs))") {
		t.Errorf("the verified fix was not applied:\n%s", got)
	}
}

// TestRedPhaseFirstPytestAndJUnit: a pytest check and a check writing a
// JUnit report of its own: the first request names each failing test and
// its message.
func TestRedPhaseFirstPytestAndJUnit(t *testing.T) {
	py := ""
	for _, cand := range []string{"python3", "/usr/bin/python3"} {
		if exec.Command(cand, "-m", "pytest", "--version").Run() == nil {
			py = cand
			break
		}
	}
	if py == "" {
		t.Skip("no python3 with pytest (python3-pytest) is installed")
	}
	junit := `<testsuite name="shell" tests="2" failures="1"><testcase classname="calc" name="adds"/><testcase classname="calc" name="divides"><failure message="divide(1, 4) = 0, want 0.25">calc.sh:3: divide(1, 4) = 0, want 0.25</failure></testcase></testsuite>`
	w, cs := feedbackWorld(t, map[string]string{
		"stats.py":      "def mean(xs):\n    return sum(xs) // len(xs)\n",
		"test_stats.py": "from stats import mean\n\n\ndef test_mean():\n    assert mean([1, 2, 3, 4]) == 2.5\n",
		"calc.sh":       "#!/bin/sh\nmkdir -p out\ncat > out/junit.xml <<'EOF'\n" + junit + "\nEOF\nexit 1\n",
		"task.ioh.yaml": "version: 1\ngoal: \"make the checks pass\"\nverify:\n  red_green: true\n  checks:\n    - name: py\n      run: [" + py + ", -m, pytest, -q, -p, no:cacheprovider]\n    - name: calc\n      run: [sh, calc.sh]\n      report: junit:out/junit.xml\n",
	}, nil)
	code, _, errOut := w.cli("run", "task.ioh.yaml", "--approve", "never")
	if code == exitOK {
		t.Fatalf("run of an unfixed tree: exit 0: %s", errOut)
	}
	first := cs.userText(0)
	if os.Getenv("IOH_SHOW") != "" {
		t.Logf("first request:\n%s", first)
	}
	for _, want := range []string{"test_stats.test_mean", "assert 2 == 2.5", "calc.divides", "want 0.25", "calc.sh:3"} {
		if !strings.Contains(first, want) {
			t.Errorf("the first request does not name %q:\n%s", want, first)
		}
	}
}

// TestPreflightBeforeTheFirstCall: a check whose runner is missing is a
// preflight problem said in words to the user (a warning event before any
// model call) and to the model in its first message, not a test failure.
func TestPreflightBeforeTheFirstCall(t *testing.T) {
	w, cs := feedbackWorld(t, map[string]string{
		"a.txt":         "a\n",
		"task.ioh.yaml": "version: 1\ngoal: \"make the checks pass\"\nverify:\n  red_green: true\n  checks:\n    - name: missing\n      run: [no-such-runner-xyz, --all]\n",
	}, nil)
	_, _, errOut := w.cli("run", "task.ioh.yaml", "--approve", "never")
	first := cs.userText(0)
	if !strings.Contains(first, "program not found: no-such-runner-xyz") {
		t.Errorf("the first request does not say the program is missing:\n%s", first)
	}
	id := runID(t, errOut)
	warned := false
	for _, e := range w.traceEvents(id, "warning") {
		if m, _ := e["message"].(string); strings.Contains(m, "program not found: no-such-runner-xyz") && e["step"] == 0.0 {
			warned = true
		}
	}
	if !warned {
		t.Errorf("no step-0 warning names the missing program; stderr:\n%s", errOut)
	}
	if before, _, _ := strings.Cut(errOut, "step 1:"); !strings.Contains(before, "program not found: no-such-runner-xyz") {
		t.Errorf("stderr does not say the program is missing before the first step:\n%s", errOut)
	}
}

// TestRunKeepsTheEnd: `run` of a command that prints 200 KB and then a
// summary line: it runs to exit 0 (it was killed at 64 KiB, exit 137, the
// summary lost), the summary line is in the result, the result is at
// most 12 KiB and says how much it left out and how to narrow.
func TestRunKeepsTheEnd(t *testing.T) {
	w, cs := feedbackWorld(t, map[string]string{"a.txt": "a\n", "task.ioh.yaml": "version: 1\ngoal: \"look\"\n"}, []string{
		call("run", map[string]any{"shell": "head -c 200000 /dev/zero | tr '\\0' x; echo; echo 'summary: 812 passed'"}),
	}, "policy:\n  rules:\n    - {act: exec, effect: allow, pattern: \"sh -c *\"}\n")
	if code, _, errOut := w.cli("run", "task.ioh.yaml", "--approve", "never"); code != exitOK {
		t.Fatalf("run: exit %d: %s", code, errOut)
	}
	res := cs.toolResults(1)
	if len(res) != 1 {
		t.Fatalf("tool results %q", res)
	}
	r := res[0]
	t.Logf("run result: %d bytes of a 200 KB output", len(r))
	if !strings.HasPrefix(r, "exit code 0\n") || !strings.Contains(r, "summary: 812 passed") || len(r) > 12<<10 ||
		!strings.Contains(r, "bytes of output left out here") || !strings.Contains(r, "narrow the command") {
		t.Errorf("run result (%d bytes): %.600s … %s", len(r), r, r[max(0, len(r)-300):])
	}
}
