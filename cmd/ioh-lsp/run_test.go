package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ioh-lsp/ioh-lsp/internal/agent"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/trace"
)

// crashCassette edits main.go by inserting a line (an edit applied twice
// would show), writes a new file, searches, and finishes; verification is
// slow enough to be killed in.
const crashCassette = `{"version": 1, "turns": [
 {"text": "Reading.", "tool_calls": [{"name": "read_file", "arguments": {"path": "main.go"}}], "usage": {"input_tokens": 1000, "output_tokens": 10}},
 {"tool_calls": [{"name": "edit_file", "arguments": {"path": "main.go", "old": "// end", "new": "// added\n// end"}}], "usage": {"input_tokens": 1100, "output_tokens": 20}},
 {"tool_calls": [{"name": "write_file", "arguments": {"path": "notes.txt", "content": "note\n"}}], "usage": {"input_tokens": 1200, "output_tokens": 30}},
 {"tool_calls": [{"name": "grep", "arguments": {"pattern": "added"}}], "usage": {"input_tokens": 1300, "output_tokens": 40}},
 {"tool_calls": [{"name": "edit_file", "arguments": {"path": "main.go", "old": "// added", "new": "// added\n// twice"}}], "usage": {"input_tokens": 1400, "output_tokens": 50}},
 {"tool_calls": [{"name": "finish", "arguments": {"summary": "added a line"}}], "usage": {"input_tokens": 1500, "output_tokens": 60}}
]}`

const crashTask = `version: 1
goal: "add a line"
verify:
  checks:
    - name: added
      shell: "sleep 0.3; grep -q added main.go"
model:
  provider: replay
  cassette: cassette.json
`

const crashMain = "package main\n\nfunc main() {}\n\n// end\n"

func buildBinary(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "ioh-lsp")
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// newCrashWorkspace makes a git-rooted workspace with its own state dir.
func newCrashWorkspace(t *testing.T) (dir string, env []string) {
	t.Helper()
	dir = t.TempDir()
	for name, content := range map[string]string{"main.go": crashMain, "task.ioh.yaml": crashTask, "cassette.json": crashCassette} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	os.Mkdir(filepath.Join(dir, ".git"), 0o755)
	env = append(os.Environ(), "IOH_STATE_DIR="+t.TempDir(), "IOH_TEST_MODEL_DELAY=150ms")
	return dir, env
}

type runEnd struct {
	files   map[string]string
	outcome string
	steps   int
	tokens  int64
}

func finalState(t *testing.T, bin, dir string, env []string, id string) runEnd {
	t.Helper()
	cmd := exec.Command(bin, "runs", "--json")
	cmd.Dir, cmd.Env = dir, env
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("runs: %v", err)
	}
	var runs []runSummary
	if err := json.Unmarshal(out, &runs); err != nil {
		t.Fatalf("runs output %q: %v", out, err)
	}
	e := runEnd{files: map[string]string{}}
	for _, r := range runs {
		if r.ID == id {
			e.outcome, e.steps, e.tokens = r.Outcome, r.Steps, r.Tokens
		}
	}
	for _, f := range []string{"main.go", "notes.txt"} {
		b, _ := os.ReadFile(filepath.Join(dir, f))
		e.files[f] = string(b)
	}
	return e
}

// TestBinary builds ioh-lsp once and runs it as a child process: crash
// and resume, secrets, interruption.
func TestBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and runs it many times")
	}
	bin := buildBinary(t)
	t.Run("crash and resume", func(t *testing.T) { testCrashAndResume(t, bin) })
	t.Run("secrets never written", func(t *testing.T) { testSecretsNeverWritten(t, bin) })
	t.Run("interrupt", func(t *testing.T) { testInterrupt(t, bin) })
}

// testInterrupt: SIGINT during a run ends it as cancelled, exit 130, and
// the trace says so.
func testInterrupt(t *testing.T, bin string) {
	dir, env := newCrashWorkspace(t)
	env = append(env, "IOH_TEST_MODEL_DELAY=1h")
	cmd := exec.Command(bin, "run", "task.ioh.yaml", "--approve", "auto", "--json")
	cmd.Dir, cmd.Env = dir, env
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(stdout)
	var id string
	for sc.Scan() && id == "" {
		var ev map[string]any
		if json.Unmarshal(sc.Bytes(), &ev) == nil && ev["type"] == "run_started" {
			id, _ = ev["run"].(string)
		}
	}
	cmd.Process.Signal(os.Interrupt)
	for sc.Scan() {
	}
	err = cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != exitCancelled {
		t.Fatalf("exit: %v, want %d", err, exitCancelled)
	}
	if got := finalState(t, bin, dir, env, id); got.outcome != "cancelled" {
		t.Errorf("outcome %q, want cancelled", got.outcome)
	}
}

// testCrashAndResume kills `ioh-lsp run` with SIGKILL at several points,
// resumes, and checks the end state equals an uninterrupted run's: same
// files (edits applied once), outcome, steps and tokens (nothing charged
// twice).
func testCrashAndResume(t *testing.T, bin string) {
	ref := func() runEnd {
		dir, env := newCrashWorkspace(t)
		cmd := exec.Command(bin, "run", "task.ioh.yaml", "--approve", "auto", "--json")
		cmd.Dir, cmd.Env = dir, env
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("reference run: %v", err)
		}
		return finalState(t, bin, dir, env, runIDOf(t, out))
	}()
	if ref.outcome != "applied" || !strings.Contains(ref.files["main.go"], "// added\n// twice\n// end") {
		t.Fatalf("reference run: %+v", ref)
	}
	tests := []struct {
		name string
		// kill when this event type is seen for the n-th time
		event string
		n     int
	}{
		{"during a provider call", "budget", 3}, // the next call waits 150ms after this step's tools
		{"right after a tool result", "tool_result", 2},
		{"during verification", "tool_call", 6}, // finish: the check sleeps 300ms
		{"before the first step commits", "model_turn", 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir, env := newCrashWorkspace(t)
			cmd := exec.Command(bin, "run", "task.ioh.yaml", "--approve", "auto", "--json")
			cmd.Dir, cmd.Env = dir, env
			stdout, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			id, seen := "", 0
			sc := bufio.NewScanner(stdout)
			for sc.Scan() {
				var ev map[string]any
				if json.Unmarshal(sc.Bytes(), &ev) != nil {
					continue
				}
				if id == "" {
					id, _ = ev["run"].(string)
				}
				if ev["type"] == tt.event {
					if seen++; seen == tt.n {
						cmd.Process.Signal(syscall.SIGKILL)
						break
					}
				}
			}
			cmd.Wait()
			if id == "" {
				t.Fatal("no run id before the kill")
			}
			// Its process is gone, so nothing drives it: it shows as
			// interrupted (the trace stores it as running).
			if mid := finalState(t, bin, dir, env, id); mid.outcome != "interrupted" || mid.tokens >= ref.tokens {
				t.Fatalf("the kill did not interrupt the run: %+v", mid)
			}
			res := exec.Command(bin, "resume", id, "--approve", "auto")
			res.Dir, res.Env = dir, env
			var errb bytes.Buffer
			res.Stderr = &errb
			if err := res.Run(); err != nil {
				t.Fatalf("resume: %v\n%s", err, errb.String())
			}
			got := finalState(t, bin, dir, env, id)
			if diff := cmp.Diff(got, ref, cmp.AllowUnexported(runEnd{})); diff != "" {
				t.Errorf("resumed run differs from the uninterrupted one (-got +want):\n%s\nresume stderr:\n%s", diff, errb.String())
			}
			// A second resume of the finished run is a no-op.
			again := exec.Command(bin, "resume", id, "--approve", "auto")
			again.Dir, again.Env = dir, env
			if err := again.Run(); err != nil {
				t.Errorf("second resume: %v", err)
			}
			if diff := cmp.Diff(finalState(t, bin, dir, env, id), ref, cmp.AllowUnexported(runEnd{})); diff != "" {
				t.Errorf("second resume changed the run:\n%s", diff)
			}
		})
	}
}

func runIDOf(t *testing.T, jsonLines []byte) string {
	t.Helper()
	for _, line := range bytes.Split(jsonLines, []byte("\n")) {
		var ev map[string]any
		if json.Unmarshal(line, &ev) == nil {
			if id, ok := ev["run"].(string); ok && id != "" {
				return id
			}
		}
	}
	t.Fatal("no run id in the output")
	return ""
}

// TestRunUsageErrors: bad flags and contracts exit 2 with one line.
func TestRunUsageErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yaml")
	os.WriteFile(bad, []byte("version: 1\ngoal: x\nbogus: 1\n"), 0o644)
	good := filepath.Join(dir, "good.yaml")
	os.WriteFile(good, []byte("version: 1\ngoal: x\n"), 0o644)
	state := filepath.Join(dir, "state")
	tests := []struct {
		args []string
		want string
	}{
		// A missing positional is named, and the usage line follows.
		{[]string{"run"}, "missing FILE\nusage: ioh-lsp run [flags] FILE\n"},
		{[]string{"run", bad, "--approve", "maybe"}, "bad --approve"},
		{[]string{"run", bad}, "bogus"},
		{[]string{"run", filepath.Join(dir, "missing.yaml")}, "missing.yaml"},
		{[]string{"resume"}, "missing RUN_ID"},
		{[]string{"trace"}, "missing RUN_ID"},
		{[]string{"reject", "a", "b"}, "unexpected argument"},
		// Setup problems are usage errors too, not failed runs (exit 1).
		{[]string{"run", good, "--approve", "never"}, "no model provider configured"},
		{[]string{"run", good, "--provider", "bogus", "--approve", "never"}, `unknown provider "bogus"`},
	}
	for _, tt := range tests {
		var stderr bytes.Buffer
		getenv := func(k string) string {
			if k == "IOH_STATE_DIR" {
				return state
			}
			return ""
		}
		env := &cliEnv{stdin: strings.NewReader(""), stdout: &bytes.Buffer{}, stderr: &stderr, getenv: getenv}
		code := dispatch(context.Background(), env, tt.args)
		if code != exitUsage || !strings.Contains(stderr.String(), tt.want) || strings.Count(strings.TrimSpace(stderr.String()), "\n") > strings.Count(tt.want, "\n") {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q on one line", tt.args, code, stderr.String(), tt.want)
		}
	}
}

// testSecretsNeverWritten plants an API key in the environment and in a
// workspace file the agent reads, runs a task, and greps every byte the
// run wrote (database, WAL, stdout, stderr) for it.
func testSecretsNeverWritten(t *testing.T, bin string) {
	const key = "sk-ant-planted-0123456789abcdefXYZ"
	dir := t.TempDir()
	os.Mkdir(filepath.Join(dir, ".git"), 0o755)
	cassette := `{"version": 1, "turns": [
 {"tool_calls": [{"name": "read_file", "arguments": {"path": "config.txt"}}]},
 {"tool_calls": [{"name": "run", "arguments": {"shell": "env; cat config.txt"}}]},
 {"tool_calls": [{"name": "write_file", "arguments": {"path": "out.txt", "content": "ok"}}]},
 {"tool_calls": [{"name": "finish", "arguments": {"summary": "done"}}]}]}`
	files := map[string]string{
		"config.txt":    "key=" + key + "\n",
		"cassette.json": cassette,
		"task.ioh.yaml": "version: 1\ngoal: read config\nmodel:\n  provider: replay\n  cassette: cassette.json\npolicy:\n  rules: []\n",
	}
	for n, c := range files {
		os.WriteFile(filepath.Join(dir, n), []byte(c), 0o644)
	}
	state := t.TempDir()
	cmd := exec.Command(bin, "run", "task.ioh.yaml", "--approve", "auto", "--json")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "IOH_STATE_DIR="+state, "ANTHROPIC_API_KEY="+key)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.Run()
	if !strings.Contains(stdout.String(), `"type":"outcome"`) {
		t.Fatalf("the run did not end: %s\n%s", stdout.String(), stderr.String())
	}
	if !strings.Contains(stdout.String(), "[REDACTED]") {
		t.Errorf("the planted key was never seen, the test proves nothing:\n%s", stdout.String())
	}
	written := map[string][]byte{"stdout": stdout.Bytes(), "stderr": stderr.Bytes()}
	filepath.Walk(state, func(p string, fi os.FileInfo, err error) error {
		if err == nil && !fi.IsDir() {
			b, _ := os.ReadFile(p)
			written[p] = b
		}
		return nil
	})
	if len(written) < 3 {
		t.Fatalf("no state files written: %v", written)
	}
	for name, b := range written {
		if bytes.Contains(b, []byte(key)) {
			t.Errorf("%s holds the key", name)
		}
	}
}

// TestRunsRollsUpSubAgents: a run's tokens and cost include its sub-agents'
// at any depth; parent is null for a root.
func TestRunsRollsUpSubAgents(t *testing.T) {
	rows := []*trace.RunRow{
		{ID: "r", Totals: trace.Totals{Steps: 3, InputTokens: 100, OutputTokens: 10, CostUSD: 1}},
		{ID: "c", Parent: "r", Root: "r", Totals: trace.Totals{InputTokens: 50, CostUSD: 0.5}},
		{ID: "g", Parent: "c", Root: "r", Totals: trace.Totals{OutputTokens: 5, CacheReadTokens: 5, CostUSD: 0.25}},
	}
	got := summarize(agent.StoredRuns(rows))
	tokens := map[string]int64{}
	var roots int
	for _, s := range got {
		tokens[s.ID] = s.Tokens
		if s.Parent == nil {
			roots++
		}
	}
	if diff := cmp.Diff(tokens, map[string]int64{"r": 165, "c": 55, "g": 5}); diff != "" {
		t.Errorf("tokens (-got +want):\n%s", diff)
	}
	if roots != 1 || got[0].CostUSD == nil || *got[0].CostUSD != 1.75 {
		t.Errorf("roots %d, root cost %v", roots, got[0].CostUSD)
	}
	b, _ := json.Marshal(got[0])
	if got[0].CacheReadTokens != 5 {
		t.Errorf("root cache reads %d, want the grandchild's 5 beside its tokens", got[0].CacheReadTokens)
	}
	for _, k := range []string{`"id"`, `"goal"`, `"outcome"`, `"steps"`, `"tokens"`, `"cache_read_tokens"`, `"cost_usd"`, `"started"`, `"parent":null`} {
		if !bytes.Contains(b, []byte(k)) {
			t.Errorf("runs --json entry %s lacks %s", b, k)
		}
	}
}
