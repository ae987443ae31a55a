package api_test

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/ioh-lsp/ioh-lsp/internal/agent/config"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/contract"
	"github.com/ioh-lsp/ioh-lsp/internal/lsp/api"
)

func settingsSchema(t *testing.T) *contract.Schema {
	t.Helper()
	doc, err := api.SettingsSchema()
	if err != nil {
		t.Fatal(err)
	}
	s, err := contract.CompileSchema(doc)
	if err != nil {
		t.Fatalf("the built-in interpreter refuses the settings schema: %v", err)
	}
	return s
}

// serverReads loads raw as the editor layer the way the server does.
func serverReads(t *testing.T, raw string) error {
	t.Helper()
	home := t.TempDir()
	_, err := config.Load(config.LoadOptions{
		UserPath: filepath.Join(home, "none.yaml"),
		Editor:   []byte(raw),
		Getenv: func(k string) string {
			if k == "HOME" {
				return home
			}
			return ""
		},
	})
	return err
}

// TestSettingsSchemaAndServerAgree: what the server reads as editor
// settings the schema accepts; what the schema refuses the server refuses
// too. The last group the schema cannot judge (a duration's syntax, a
// byte size's unit) and leaves to the server.
func TestSettingsSchemaAndServerAgree(t *testing.T) {
	s := settingsSchema(t)
	both := []string{
		`{}`,
		`{"model": {"provider": "replay", "name": "test", "cassette": "/tmp/c.json"}}`,
		`{"model": {"provider": "", "api_key_env": "MY_API_KEY", "fallback": [{"provider": "openai", "name": "gpt", "api_key_env": "X_TOKEN"}]}}`,
		`{"approve": "never", "budget": {"steps": 10, "tokens": 1000, "cost_usd": 0.5, "wall": "15m"}}`,
		`{"policy": {"rules": [{"act": "exec", "effect": "allow", "pattern": "go test *"}]}}`,
		`{"trusted": ["/home/me/src"], "prices": {"m": {"input": 1, "output": 2}}}`,
		`{"sandbox": {"require": "floor", "masked": ["~/.aws"], "limits": {"memory": "256MiB", "output": 1048576, "procs": 64, "wall": "1m"}}}`,
		`{"mcp": {"servers": [{"name": "x", "url": "http://127.0.0.1:9/mcp", "tools": ["*"]}]}}`,
	}
	refused := []string{
		`{"modle": {}}`,
		`{"model": {"provider": "anthropix"}}`,
		`{"model": {"baseUrl": "http://x"}}`,
		`{"model": {"api_key_env": "HOME"}}`,
		`{"model": {"fallback": [{"provider": "x", "name": "y"}]}}`,
		`{"approve": "always"}`,
		`{"approve": ""}`,
		`{"budget": {"steps": "many"}}`,
		`{"budget": {"costUsd": 1}}`,
		`{"policy": {"rules": [{"act": "exec", "effect": "allow"}]}}`,
		`{"policy": {"rules": [{"act": "run", "effect": "allow", "pattern": "x"}]}}`,
		`{"policy": {"rules": [{"act": "exec", "effect": "permit", "pattern": "x"}]}}`,
		`{"trusted": "/home/me"}`,
		`{"sandbox": {"require": "none"}}`,
		`{"sandbox": {"limits": {"memory": true}}}`,
	}
	onlyServer := []string{
		`{"budget": {"wall": "fifteen minutes"}}`,
		`{"sandbox": {"limits": {"memory": "256 parsecs"}}}`,
	}
	for _, raw := range both {
		if err := serverReads(t, raw); err != nil {
			t.Errorf("the server refuses %s: %v", raw, err)
		}
		if err := s.Validate([]byte(raw)); err != nil {
			t.Errorf("the schema refuses %s, which the server reads: %v", raw, err)
		}
	}
	for _, raw := range refused {
		if err := serverReads(t, raw); err == nil {
			t.Errorf("the server reads %s", raw)
		}
		if err := s.Validate([]byte(raw)); err == nil {
			t.Errorf("the schema accepts %s, which the server refuses", raw)
		}
	}
	for _, raw := range onlyServer {
		if err := serverReads(t, raw); err == nil {
			t.Errorf("the server reads %s", raw)
		}
	}
}

// TestKeyEnvPatternIsTheServersRule: the schema's pattern for
// api_key_env decides as the server's check does.
func TestKeyEnvPatternIsTheServersRule(t *testing.T) {
	re := regexp.MustCompile(config.KeyEnvPattern)
	for _, name := range []string{"", "ANTHROPIC_API_KEY", "GITHUB_TOKEN", "HOME", "API_KEY_X", "MY_TOKEN_", "TOKEN"} {
		raw := `{"model": {"api_key_env": "` + name + `"}}`
		server := serverReads(t, raw) == nil
		if re.MatchString(name) != server {
			t.Errorf("%q: pattern says %v, the server %v", name, re.MatchString(name), server)
		}
	}
}

func TestSettingsSchemaDescribesEveryKey(t *testing.T) {
	doc, err := api.SettingsSchema()
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{`"model"`, `"approve"`, `"budget"`, `"policy"`, `"trusted"`, `"prices"`, `"sandbox"`, `"mcp"`, `"telemetry"`} {
		if !strings.Contains(string(doc), key+": {") {
			t.Errorf("the settings schema has no %s", key)
		}
	}
}
