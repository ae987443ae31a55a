package wire

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ioh-lsp/ioh-lsp/internal/agent"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/contract"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/event"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/trace"
)

func TestApplyOverrides(t *testing.T) {
	base := contract.Model{Provider: "anthropic", Name: "claude", BaseURL: "http://x", APIKeyEnv: "A_API_KEY",
		Fallback: []contract.Fallback{{Provider: "openrouter"}}}
	tests := []struct {
		name string
		ov   Overrides
		want contract.Model
	}{
		{"none", Overrides{}, base},
		{"model only", Overrides{Model: "opus"}, contract.Model{Provider: "anthropic", Name: "opus", BaseURL: "http://x", APIKeyEnv: "A_API_KEY", Fallback: base.Fallback}},
		{"cassette selects replay", Overrides{Cassette: "/c.json"}, contract.Model{Provider: "replay", Cassette: "/c.json", BaseURL: "http://x", APIKeyEnv: "A_API_KEY"}},
		{"other provider drops its endpoint", Overrides{Provider: "openai", Model: "gpt"}, contract.Model{Provider: "openai", Name: "gpt"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(ApplyOverrides(base, tt.ov), tt.want); diff != "" {
				t.Errorf("(-got +want):\n%s", diff)
			}
		})
	}
}

func TestSecrets(t *testing.T) {
	env := map[string]string{"ANTHROPIC_API_KEY": "sk-ant-1", "OPENAI_API_KEY": "sk-oa-2"}
	got := Secrets(func(k string) string { return env[k] }, func() []string {
		return []string{"GITHUB_TOKEN=ghp_3", "PATH=/bin", "DB_PASSWORD=pw4", "OPENAI_API_KEY=sk-oa-2", "broken"}
	})
	if diff := cmp.Diff(got, []string{"ghp_3", "pw4", "sk-ant-1", "sk-oa-2"}); diff != "" {
		t.Errorf("(-got +want):\n%s", diff)
	}
}

func TestFindRoot(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "repo", ".git"), 0o755)
	os.MkdirAll(filepath.Join(dir, "repo", "a", "b"), 0o755)
	os.WriteFile(filepath.Join(dir, "repo", "a", "b", "t.yaml"), nil, 0o644)
	if got := FindRoot(filepath.Join(dir, "repo", "a", "b", "t.yaml"), "fb"); got != filepath.Join(dir, "repo") {
		t.Errorf("FindRoot = %s", got)
	}
	if got := FindRoot(dir, "fb"); got != "fb" {
		t.Errorf("outside a repository: %s, want the fallback", got)
	}
}

// NewHarness builds a working harness: the store under the state
// directory, the config's policy, and a replay run through it.
func TestNewHarnessRunsReplay(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "a.txt"), []byte("x\n"), 0o644)
	cassette := filepath.Join(dir, "c.json")
	os.WriteFile(cassette, []byte(`{"version":1,"turns":[
		{"tool_calls":[{"name":"write_file","arguments":{"path":".git/hooks/pre-commit","content":"evil"}}]},
		{"tool_calls":[{"name":"write_file","arguments":{"path":"a.txt","content":"y\n"}}]},
		{"tool_calls":[{"name":"finish","arguments":{"summary":"s"}}]}]}`), 0o644)
	state := t.TempDir()
	env := map[string]string{"IOH_STATE_DIR": state, "HOME": t.TempDir()}
	var events []event.Event
	eng, err := NewHarness(context.Background(), Options{
		Root: dir, Getenv: func(k string) string { return env[k] }, Environ: func() []string { return nil },
		Overrides: Overrides{Cassette: cassette}, Approver: applyAll{},
		Sink: event.SinkFunc(func(e event.Event) { events = append(events, e) }),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	run, err := eng.Harness.Start(context.Background(), &contract.Contract{Version: 1, Goal: "g", Retry: contract.DefaultRetry()})
	if err != nil {
		t.Fatal(err)
	}
	res := run.Wait()
	if res.Outcome != agent.OutcomeApplied {
		t.Fatalf("outcome %s (%v)", res.Outcome, res.Err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "a.txt")); string(b) != "y\n" {
		t.Errorf("a.txt = %q", b)
	}
	var denied bool
	for _, e := range events {
		if p, ok := e.Payload.(*event.Policy); ok && p.Effect == "deny" && p.Layer == "builtin" {
			denied = true
		}
	}
	if !denied {
		t.Error("the built-in layer did not deny a write under .git")
	}
	if _, err := os.Stat(trace.DBPath(state, eng.Root.Dir())); err != nil {
		t.Errorf("no database under the state dir: %v", err)
	}
}

type applyAll struct{}

func (applyAll) ApproveAct(context.Context, *agent.ActRequest) (agent.Decision, error) {
	return agent.Decision{Answer: agent.AllowOnce}, nil
}

func (applyAll) ApproveChange(context.Context, *agent.Proposal) (agent.Decision, error) {
	return agent.Decision{Answer: agent.AllowOnce}, nil
}
