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
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// askTask is crashTask with writes of notes.txt in the Ask tier: the
// cassette's third turn writes it.
const askTask = crashTask + `policy:
  rules:
    - {act: write, effect: ask, pattern: "notes.txt"}
`

// cli runs the binary in dir with env and stdin closed; it returns the
// exit code and stderr.
func cli(t *testing.T, ctx context.Context, bin, dir string, env []string, args ...string) (int, string) {
	t.Helper()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir, cmd.Env = dir, env
	var errb bytes.Buffer
	cmd.Stderr = &errb
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0, errb.String()
	case errors.As(err, &ee):
		return ee.ExitCode(), errb.String()
	}
	t.Fatalf("%v: %v", args, err)
	return -1, ""
}

// traceText is `ioh-lsp trace ID --json`.
func traceText(t *testing.T, ctx context.Context, bin, dir string, env []string, id string) string {
	t.Helper()
	cmd := exec.CommandContext(ctx, bin, "trace", id, "--json")
	cmd.Dir, cmd.Env = dir, env
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("trace: %v", err)
	}
	return string(out)
}

// TestDeferredActAnsweredFromAnywhere: with --approve ask and no terminal a
// run stops at an Ask-tier act (exit 4); approve / approve --for-run /
// reject --reason record the answer, and resume continues with it without
// prompting (issue 13 item 2). The control: resumed under --approve auto
// with no answer recorded, the act is denied and notes.txt never written.
func TestDeferredActAnsweredFromAnywhere(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and runs it")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	bin := buildBinary(t)
	tests := []struct {
		name     string
		answer   []string // nil: no answer (the control)
		resume   string   // --approve mode of the resume
		notes    bool     // notes.txt written in the end
		inTrace  string   // the recorded answer, as the trace shows it
		exit     int      // of the resume
		settleUp bool     // the change then waits: approve applies it
	}{
		{name: "approve once", answer: []string{"approve"}, resume: "ask", notes: true, inTrace: `"answer":"allow_once"`, exit: exitDeferred, settleUp: true},
		{name: "approve for the run", answer: []string{"approve", "--for-run"}, resume: "auto", notes: true, inTrace: `"answer":"allow_run"`, exit: 0},
		{name: "reject with a reason", answer: []string{"reject", "--reason", "no notes please"}, resume: "auto", notes: false, inTrace: `no notes please`, exit: 0},
		{name: "reject without a reason", answer: []string{"reject"}, resume: "auto", notes: false, inTrace: `denied by the user: write notes.txt: no reason given`, exit: 0},
		{name: "control no answer so auto denies", resume: "auto", notes: false, inTrace: `automatic approval does not grant acts`, exit: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir, env := newCrashWorkspace(t)
			if err := os.WriteFile(filepath.Join(dir, "task.ioh.yaml"), []byte(askTask), 0o644); err != nil {
				t.Fatal(err)
			}
			env = append(env, "IOH_TEST_MODEL_DELAY=0s", "HOME="+t.TempDir(), "XDG_CONFIG_HOME="+t.TempDir(), "XDG_STATE_HOME="+t.TempDir())
			cmd := exec.CommandContext(ctx, bin, "run", "task.ioh.yaml", "--approve", "ask", "--json")
			cmd.Dir, cmd.Env = dir, env
			var errb bytes.Buffer
			cmd.Stderr = &errb
			out, err := cmd.Output()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != exitDeferred {
				t.Fatalf("run: %v, want exit %d\n%s", err, exitDeferred, errb.String())
			}
			id := runIDOf(t, out)
			if mid := finalState(t, bin, dir, env, id); mid.outcome != "awaiting_approval" {
				t.Fatalf("after run: %+v, want awaiting_approval", mid)
			}
			if hint := "an act awaits your answer: ioh-lsp approve " + id; !strings.Contains(errb.String(), hint) {
				t.Errorf("run's summary lacks %q:\n%s", hint, errb.String())
			}
			if tt.answer != nil {
				code, msg := cli(t, ctx, bin, dir, env, append(append([]string(nil), tt.answer...), id)...)
				if code != 0 || !strings.Contains(msg, "ioh-lsp resume "+id) {
					t.Fatalf("%v: exit %d, %q", tt.answer, code, msg)
				}
				// Recording an answer does not continue the run.
				if mid := finalState(t, bin, dir, env, id); mid.outcome != "awaiting_approval" || mid.files["notes.txt"] != "" {
					t.Fatalf("after %v: %+v", tt.answer, mid)
				}
			}
			code, msg := cli(t, ctx, bin, dir, env, "resume", id, "--approve", tt.resume)
			if code != tt.exit {
				t.Fatalf("resume: exit %d, want %d\n%s", code, tt.exit, msg)
			}
			if strings.Contains(msg, "wants to write") {
				t.Errorf("resume prompted for the answered act:\n%s", msg)
			}
			if tt.settleUp {
				if c, m := cli(t, ctx, bin, dir, env, "approve", id); c != 0 {
					t.Fatalf("approve the change: exit %d\n%s", c, m)
				}
			}
			end := finalState(t, bin, dir, env, id)
			if end.outcome != "applied" || !strings.Contains(end.files["main.go"], "// added\n// twice\n// end") {
				t.Fatalf("end: %+v, want applied", end)
			}
			if got := end.files["notes.txt"] == "note\n"; got != tt.notes {
				t.Errorf("notes.txt written = %v, want %v", got, tt.notes)
			}
			if tr := traceText(t, ctx, bin, dir, env, id); !strings.Contains(tr, tt.inTrace) {
				t.Errorf("trace lacks %s", tt.inTrace)
			}
		})
	}
	t.Run("nothing to answer", func(t *testing.T) {
		dir, env := newCrashWorkspace(t)
		env = append(env, "IOH_TEST_MODEL_DELAY=0s")
		if code, msg := cli(t, ctx, bin, dir, env, "approve", "--for-run", "r-0000000000000000"); code != exitUsage {
			t.Errorf("approve of an unknown run: exit %d, want %d (%s)", code, exitUsage, msg)
		}
	})
}

// TestCancelledRunResumes: a run cancelled (SIGINT) after some committed
// steps ends cancelled (exit 130); resume continues it from its last
// committed step to the same end as an uninterrupted run: same files (no
// edit applied twice), outcome, steps and tokens (issue 13 item 4).
func TestCancelledRunResumes(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and runs it")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	bin := buildBinary(t)
	dir, env := newCrashWorkspace(t)
	refCmd := exec.CommandContext(ctx, bin, "run", "task.ioh.yaml", "--approve", "auto", "--json")
	refCmd.Dir, refCmd.Env = dir, env
	out, err := refCmd.Output()
	if err != nil {
		t.Fatalf("reference run: %v", err)
	}
	ref := finalState(t, bin, dir, env, runIDOf(t, out))
	if ref.outcome != "applied" {
		t.Fatalf("reference run: %+v", ref)
	}

	dir, env = newCrashWorkspace(t)
	cmd := exec.CommandContext(ctx, bin, "run", "task.ioh.yaml", "--approve", "auto", "--json")
	// Slow model calls: the interrupt lands while the third waits.
	cmd.Dir, cmd.Env = dir, append(env, "IOH_TEST_MODEL_DELAY=2s")
	var runErr bytes.Buffer
	cmd.Stderr = &runErr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	id, results := "", 0
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		var ev map[string]any
		if json.Unmarshal(sc.Bytes(), &ev) != nil {
			continue
		}
		if id == "" {
			id, _ = ev["run"].(string)
		}
		if ev["type"] == "tool_result" {
			if results++; results == 2 {
				cmd.Process.Signal(os.Interrupt) // two steps committed, the third call waits
			}
		}
	}
	err = cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != exitCancelled {
		t.Fatalf("exit: %v, want %d", err, exitCancelled)
	}
	if hint := "continue it from its last committed step: ioh-lsp resume " + id; !strings.Contains(runErr.String(), hint) {
		t.Errorf("the cancelled run's summary lacks %q:\n%s", hint, runErr.String())
	}
	mid := finalState(t, bin, dir, env, id)
	if mid.outcome != "cancelled" || mid.files["notes.txt"] != "" || mid.steps != 2 {
		t.Fatalf("after the interrupt: %+v, want cancelled after 2 steps and nothing written", mid)
	}
	code, msg := cli(t, ctx, bin, dir, env, "resume", id, "--approve", "auto")
	if code != 0 {
		t.Fatalf("resume: exit %d\n%s", code, msg)
	}
	if diff := cmp.Diff(finalState(t, bin, dir, env, id), ref, cmp.AllowUnexported(runEnd{})); diff != "" {
		t.Errorf("resumed run differs from the uninterrupted one (-got +want):\n%s\n%s", diff, msg)
	}
}
