package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ioh-lsp/ioh-lsp/internal/agent/config"
)

// testConfig: in an untrusted workspace, config shows the user config's
// provider with the workspace's ignored (the warning naming `trusted:`),
// a lowered budget taken from the workspace and a raised one ignored, and
// untouched keys at their defaults. Control: once the user config trusts
// the workspace, the workspace's provider and budget win.
func testConfig(t *testing.T, bin string) {
	dir, env := firstHourWorkspace(t, "model:\n  provider: anthropic\n", "version: 1\ngoal: x\n")
	home := strings.TrimPrefix(env[1], "HOME=")
	os.Mkdir(filepath.Join(dir, ".ioh"), 0o755)
	if err := os.WriteFile(filepath.Join(dir, ".ioh", "config.yaml"), []byte("model:\n  provider: openai\nbudget:\n  steps: 5\n  cost_usd: 50\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	settings := func() map[string]config.Setting {
		cmd := exec.Command(bin, "config", "--json")
		cmd.Dir, cmd.Env = dir, env
		out, err := cmd.Output()
		var ss []config.Setting
		if jerr := json.Unmarshal(out, &ss); err != nil || jerr != nil {
			t.Fatalf("config --json: %v %v\n%s", err, jerr, out)
		}
		m := map[string]config.Setting{}
		for _, s := range ss {
			m[s.Key] = s
		}
		return m
	}
	m := settings()
	if s := m["model.provider"]; s.Value != "anthropic" || s.Layer != "user" || len(s.Ignored) != 1 || !strings.Contains(s.Ignored[0].Warning, "trusted:") {
		t.Errorf("model.provider = %+v, want anthropic from the user config, the workspace's ignored naming trusted:", s)
	}
	if s := m["budget.steps"]; s.Value != "5" || s.Layer != "workspace" {
		t.Errorf("budget.steps = %+v, want 5 from the workspace (a lower budget is honoured)", s)
	}
	if s := m["budget.cost_usd"]; s.Layer != "default" || len(s.Ignored) != 1 {
		t.Errorf("budget.cost_usd = %+v, want the default with the workspace's raise ignored", s)
	}
	if s := m["budget.tokens"]; s.Layer != "default" || s.Value == "" {
		t.Errorf("budget.tokens = %+v, want its default", s)
	}
	code, stderr := runIn(t, bin, dir, env, "config")
	if code != 0 || stderr != "" {
		t.Errorf("config: exit %d\n%s", code, stderr)
	}

	user := "model:\n  provider: anthropic\ntrusted:\n  - " + dir + "\n"
	if err := os.WriteFile(filepath.Join(home, ".config", "ioh", "config.yaml"), []byte(user), 0o644); err != nil {
		t.Fatal(err)
	}
	m = settings()
	if s := m["model.provider"]; s.Value != "openai" || s.Layer != "workspace" || len(s.Ignored) != 0 {
		t.Errorf("trusted: model.provider = %+v, want openai from the workspace", s)
	}
	if s := m["budget.cost_usd"]; s.Value != "50" || s.Layer != "workspace" {
		t.Errorf("trusted: budget.cost_usd = %+v, want 50 from the workspace", s)
	}
}
