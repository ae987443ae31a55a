package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// cliShellRunner is a tiny test runner in sh that writes a JUnit report.
const cliShellRunner = `mkdir -p out
cases=""; fails=0
for t in tests/*.sh; do
  name=$(basename "$t" .sh)
  if sh "$t" >/dev/null 2>&1; then cases="$cases<testcase classname=\"shell\" name=\"$name\"/>"
  else fails=$((fails+1)); cases="$cases<testcase classname=\"shell\" name=\"$name\"><failure/></testcase>"; fi
done
printf '<testsuite name="shell">%s</testsuite>\n' "$cases" > out/report.xml
[ "$fails" -eq 0 ]
`

const cliHonestTask = `version: 1
goal: "make the value 2"
verify:
  red_green: true
  checks:
    - { name: cases, run: [sh, run-tests.sh], report: "junit:out/*.xml" }
model:
  provider: replay
  cassette: cassette.json
`

// TestRunApproveAutoIsHonest runs `ioh-lsp run --approve auto --json` as
// a user would: the honest fix is applied (exit 0) with the test it fixed
// in the summary; the same fix plus an edited test waits for a human
// (exit 4, awaiting_approval, the reason in the summary); deleting the
// failing test is not verified (exit 1). Nothing but the honest fix
// reaches the files.
func TestRunApproveAutoIsHonest(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := buildBinary(t)
	fix := `{"name": "edit_file", "arguments": {"path": "value.txt", "old": "1.5", "new": "2"}}`
	for _, tt := range []struct {
		name      string
		calls     []string
		exit      int
		outcome   string
		applied   bool
		wantInSum string
	}{
		{"honest fix", []string{fix}, 0, "applied", true, `"fixed":["shell.mean"]`},
		{"fix plus an edited test", []string{fix, `{"name": "edit_file", "arguments": {"path": "tests/sum.sh", "old": "true", "new": "true # sum"}}`},
			4, "awaiting_approval", false, `"touches_checks":["edits tests/sum.sh, a test file"]`},
		{"deleted failing test", []string{`{"name": "delete_file", "arguments": {"path": "tests/mean.sh"}}`},
			1, "verification_failed", false, `shell.mean did not run in the green phase`},
	} {
		t.Run(strings.ReplaceAll(tt.name, " ", "_"), func(t *testing.T) {
			dir := t.TempDir()
			var turns []string
			for _, c := range tt.calls {
				turns = append(turns, `{"tool_calls": [`+c+`]}`)
			}
			for range 3 {
				turns = append(turns, `{"tool_calls": [{"name": "finish", "arguments": {"summary": "done"}}]}`)
			}
			files := map[string]string{
				"task.ioh.yaml": cliHonestTask, "run-tests.sh": cliShellRunner, "value.txt": "1.5\n",
				"tests/mean.sh": "grep -qx 2 value.txt\n", "tests/sum.sh": "true\n",
				"cassette.json": `{"version": 1, "turns": [` + strings.Join(turns, ",") + `]}`,
			}
			for name, body := range files {
				os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755)
				if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			os.Mkdir(filepath.Join(dir, ".git"), 0o755)
			cmd := exec.Command(bin, "run", "task.ioh.yaml", "--approve", "auto", "--json")
			cmd.Dir, cmd.Env = dir, append(os.Environ(), "IOH_STATE_DIR="+t.TempDir())
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			out, err := cmd.Output()
			code := 0
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				code = ee.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			lines := bytes.Split(bytes.TrimSpace(out), []byte("\n"))
			last := lines[len(lines)-1]
			var sum struct {
				Outcome string `json:"outcome"`
			}
			if json.Unmarshal(last, &sum) != nil || sum.Outcome != tt.outcome || code != tt.exit || !strings.Contains(string(last), tt.wantInSum) {
				t.Fatalf("exit %d, want %d; summary %s\nwant outcome %s and %s\nstderr:\n%s", code, tt.exit, last, tt.outcome, tt.wantInSum, stderr.String())
			}
			if b, _ := os.ReadFile(filepath.Join(dir, "value.txt")); (string(b) == "2\n") != tt.applied {
				t.Errorf("value.txt = %q, applied want %v", b, tt.applied)
			}
			if _, err := os.Stat(filepath.Join(dir, "tests/mean.sh")); err != nil {
				t.Errorf("tests/mean.sh gone from the workspace: %v", err)
			}
			t.Logf("stderr:\n%s", stderr.String())
			if !strings.Contains(stderr.String(), "cases: ") {
				t.Errorf("stderr summary lacks the evidence line:\n%s", stderr.String())
			}
		})
	}
}
