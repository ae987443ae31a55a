package config

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// TestUntrustedLayersCannotRaiseBudgets: an untrusted workspace's config
// and editor settings may lower a default budget but not raise it: the
// user's money is the user's to spend. Each refusal is a warning naming
// the fix. The controls: lowering is honoured, and a trusted workspace
// may raise.
func TestUntrustedLayersCannotRaiseBudgets(t *testing.T) {
	home, ws := t.TempDir(), canonical(t.TempDir())
	env := map[string]string{"XDG_CONFIG_HOME": home, "HOME": home}
	load := func(user, wsConf, editor string) *Config {
		t.Helper()
		write(t, filepath.Join(home, "ioh", "config.yaml"), user)
		write(t, WorkspacePath(ws), wsConf)
		c, err := Load(LoadOptions{WorkspaceRoot: ws, Editor: json.RawMessage(editor), Getenv: func(k string) string { return env[k] }})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	c := load("budget: {cost_usd: 2}\n", "budget: {cost_usd: 500, tokens: 1000}\n", `{"budget": {"wall": "10h"}}`)
	if c.Budget.CostUSD != 2 || c.Budget.Tokens != 1000 || c.Budget.Wall != 0 {
		t.Errorf("untrusted budget %+v, want the user's $2, the lowered 1000 tokens and no wall", c.Budget)
	}
	joined := strings.Join(c.Warnings, "\n")
	for _, w := range []string{WorkspacePath(ws) + ": budget.cost_usd ignored: it would raise the budget above 2", EditorSource + ": budget.wall ignored: it would raise the budget above 30m0s"} {
		if !strings.Contains(joined, w) || !strings.Contains(joined, "`trusted:`") {
			t.Errorf("warnings lack %q:\n%s", w, joined)
		}
	}

	// Control: trusted, the same files may raise.
	c = load("trusted: ["+ws+"]\nbudget: {cost_usd: 2}\n", "budget: {cost_usd: 500}\n", `{"budget": {"wall": "10h"}}`)
	if c.Budget.CostUSD != 500 || c.Budget.Wall.Hours() != 10 {
		t.Errorf("trusted budget %+v", c.Budget)
	}
}
