package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"strings"
	"testing"

	"github.com/ioh-lsp/ioh-lsp/internal/wire"
)

// TestFollowUpTurnsInTheTrace: a follow-up (agent.Harness.Continue, as
// ACP and the language server send it) on a run the binary left pending
// is stored in the workspace's SQLite trace, and `ioh-lsp trace` lists
// it as a user_turn with its text, in the run's order of events.
func TestFollowUpTurnsInTheTrace(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := buildBinary(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		b := string(body)
		// The first turn writes a.txt, the follow-up b.txt; each then
		// finishes (the diff review answers the first finish).
		write, file := `{"path":"a.txt","content":"one\n"}`, "a.txt"
		if strings.Contains(b, "and write two into b.txt") {
			write, file = `{"path":"b.txt","content":"two\n"}`, "b.txt"
		}
		if strings.Contains(b, "wrote 4 bytes to "+file) {
			toolCallStream(w, "finish", `{"summary":"wrote `+file+`"}`)
			return
		}
		toolCallStream(w, "write_file", write)
	}))
	t.Cleanup(srv.Close)
	user := fmt.Sprintf("model:\n  provider: openai-compatible\n  base_url: %s/v1\n  name: local-llm\n", srv.URL)
	dir, env := firstHourWorkspace(t, user, "version: 1\ngoal: write a.txt\nbudget: {cost_usd: 0}\n")
	if code, stderr := runIn(t, bin, dir, env, "run", "task.ioh.yaml", "--approve", "never"); code != 0 {
		t.Fatalf("run: exit %d, want 0 with the change pending\n%s", code, stderr)
	}
	getenv := func(k string) string {
		for _, kv := range env {
			if v, ok := strings.CutPrefix(kv, k+"="); ok {
				return v
			}
		}
		return ""
	}
	ctx := context.Background()
	e, err := wire.NewHarness(ctx, wire.Options{Root: dir, Getenv: getenv, Environ: func() []string { return nil }})
	if err != nil {
		t.Fatal(err)
	}
	rows, err := e.Store.Runs(ctx)
	if err != nil || len(rows) != 1 {
		t.Fatalf("runs: %d, %v", len(rows), err)
	}
	r, err := e.Harness.Continue(ctx, rows[0].ID, "and write two into b.txt")
	if err != nil {
		t.Fatal(err)
	}
	if res := r.Wait(); r.ID() != rows[0].ID || res.Outcome != "awaiting_approval" || res.Changes.Len() != 2 {
		t.Fatalf("follow-up: %s %s (%v), want %s pending with both files", r.ID(), res.Outcome, res.Err, rows[0].ID)
	}
	e.Close()

	cmd := exec.Command(bin, "trace", rows[0].ID)
	cmd.Dir, cmd.Env = dir, env
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("trace: %v\n%s", err, out)
	}
	var turn string
	for _, line := range strings.Split(string(out), "\n") {
		if strings.Contains(line, "user_turn") {
			turn = line
		}
	}
	if !strings.Contains(turn, `text="and write two into b.txt"`) || !strings.Contains(turn, `change="pending"`) || !strings.Contains(turn, `files=["a.txt"]`) {
		t.Errorf("trace should list the user turn with its text, change and files:\n%s", out)
	}
	if i, j := strings.Index(string(out), "user_turn"), strings.LastIndex(string(out), "write_file"); i < 0 || i > j {
		t.Errorf("the user turn should come before the turn's own write_file:\n%s", out)
	}
	cmd = exec.Command(bin, "trace", rows[0].ID, "--json")
	cmd.Dir, cmd.Env = dir, env
	if out, _ = cmd.CombinedOutput(); !strings.Contains(string(out), `"type":"user_turn"`) {
		t.Errorf("trace --json lacks the user_turn event:\n%s", out)
	}
}
