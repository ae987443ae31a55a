package config

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ioh-lsp/ioh-lsp/internal/agent/contract"
)

// endpointConfig loads a configuration whose user file selects an
// openai-compatible endpoint, over a workspace the user does not trust.
func endpointConfig(t *testing.T, userYAML string) (*Config, string) {
	t.Helper()
	home, ws := t.TempDir(), t.TempDir()
	if real, err := filepath.EvalSymlinks(ws); err == nil {
		ws = real
	}
	write(t, filepath.Join(home, "ioh", "config.yaml"), userYAML)
	env := map[string]string{"XDG_CONFIG_HOME": home, "HOME": home}
	cfg, err := Load(LoadOptions{WorkspaceRoot: ws, Getenv: func(k string) string { return env[k] }})
	if err != nil {
		t.Fatal(err)
	}
	return cfg, ws
}

const mineYAML = `model:
  provider: openai-compatible
  name: mine
  base_url: http://127.0.0.1:8080/v1
  api_key_env: MINE_API_KEY
`

// TestEndpointIsOneUnit: whatever part of the endpoint an untrusted task
// file writes differently, provider, base URL and key variable all come
// from the configuration (docs/policy.md#configuration), never mixed.
func TestEndpointIsOneUnit(t *testing.T) {
	cfg, ws := endpointConfig(t, mineYAML)
	task := filepath.Join(ws, "task.ioh.yaml")
	mine := contract.Model{Provider: "openai-compatible", Name: "mine", BaseURL: "http://127.0.0.1:8080/v1", APIKeyEnv: "MINE_API_KEY"}
	tests := []struct {
		name     string
		model    contract.Model
		want     contract.Model
		warnings []string
	}{
		{"same provider, another base URL",
			contract.Model{Provider: "openai-compatible", BaseURL: "http://collector.example"},
			mine, []string{"model.base_url"}},
		{"same provider, another key variable",
			contract.Model{Provider: "openai-compatible", APIKeyEnv: "GITHUB_TOKEN"},
			mine, []string{"model.api_key_env"}},
		{"only a base URL",
			contract.Model{BaseURL: "http://collector.example", APIKeyEnv: "MINE_API_KEY"},
			mine, []string{"model.base_url"}},
		{"another provider and its model",
			contract.Model{Provider: "anthropic", Name: "claude-x"},
			mine, []string{"model.provider", "model.name"}},
		{"the same endpoint, named in part",
			contract.Model{Provider: "openai-compatible", Name: "other-model"},
			contract.Model{Provider: "openai-compatible", Name: "other-model", BaseURL: mine.BaseURL, APIKeyEnv: mine.APIKeyEnv}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			k := &contract.Contract{Goal: "g", Path: task, Model: tt.model, Budget: contract.DefaultBudget()}
			warnings := cfg.ApplyToContract(k, cfg.ContractTrusted(task))
			if diff := cmp.Diff(k.Model, tt.want); diff != "" {
				t.Errorf("model (-got +want):\n%s", diff)
			}
			var keys []string
			for _, w := range warnings {
				_, rest, _ := strings.Cut(w, task+": ")
				key, _, _ := strings.Cut(rest, " ignored")
				keys = append(keys, key)
			}
			if diff := cmp.Diff(keys, tt.warnings); diff != "" {
				t.Errorf("warned keys (-got +want):\n%s\n%q", diff, warnings)
			}
		})
	}
}

// TestTrustedEndpointIsNotMixedEither: a trusted contract chooses its own
// endpoint; the configuration completes one of the same provider and
// never lends its base URL or key to another provider.
func TestTrustedEndpointIsNotMixedEither(t *testing.T) {
	cfg, _ := endpointConfig(t, mineYAML)
	same := &contract.Contract{Goal: "g", Model: contract.Model{Provider: "openai-compatible", Name: "x"}}
	if w := cfg.ApplyToContract(same, true); len(w) != 0 {
		t.Errorf("warnings %q", w)
	}
	if same.Model.BaseURL != "http://127.0.0.1:8080/v1" || same.Model.APIKeyEnv != "MINE_API_KEY" {
		t.Errorf("same provider not completed from the configuration: %+v", same.Model)
	}
	other := &contract.Contract{Goal: "g", Model: contract.Model{Provider: "openai", Name: "gpt"}}
	cfg.ApplyToContract(other, true)
	if other.Model.BaseURL != "" || other.Model.APIKeyEnv != "" {
		t.Errorf("another provider got the configuration's endpoint: %+v", other.Model)
	}
}

// TestPrepareContractConfinesCassettes: a cassette a contract names must
// be inside the workspace (symlinks resolved) and is never opened
// otherwise; the user config's may be anywhere. The controls show the
// same files load when the user names them.
func TestPrepareContractConfinesCassettes(t *testing.T) {
	outside := filepath.Join(t.TempDir(), "private.json")
	write(t, outside, `{"version": 1, "turns": []}`)
	cfg, ws := endpointConfig(t, "model: {provider: replay}\n")
	write(t, filepath.Join(ws, "cassettes", "c.json"), `{"version": 1, "turns": []}`)
	if err := os.Symlink(outside, filepath.Join(ws, "escape.json")); err != nil {
		t.Fatal(err)
	}
	task := filepath.Join(ws, "cassettes", "task.ioh.yaml")
	for _, tc := range []struct {
		name, path, cassette, want string
	}{
		{"relative to the task file", task, "c.json", filepath.Join(ws, "cassettes", "c.json")},
		{"inline, relative to the workspace", "", "cassettes/c.json", filepath.Join(ws, "cassettes", "c.json")},
		{"absolute outside", "", outside, ""},
		{"dot-dot out of the workspace", task, "../../" + filepath.Base(filepath.Dir(outside)) + "/private.json", ""},
		{"symlink out of the workspace", "", "escape.json", ""},
		{"/dev/zero", "", "/dev/zero", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			k := &contract.Contract{Goal: "g", Path: tc.path, Model: contract.Model{Provider: "replay", Cassette: tc.cassette}}
			_, err := cfg.PrepareContract(k)
			if tc.want == "" {
				if !errors.Is(err, ErrCassetteOutside) {
					t.Fatalf("PrepareContract = %v (cassette %s), want ErrCassetteOutside", err, k.Model.Cassette)
				}
				return
			}
			if err != nil || k.Model.Cassette != tc.want {
				t.Fatalf("PrepareContract = %v, cassette %q, want %q", err, k.Model.Cassette, tc.want)
			}
		})
	}

	// Control: the user config may name the outside file.
	user, _ := endpointConfig(t, "model: {provider: replay, cassette: "+outside+"}\n")
	k := &contract.Contract{Goal: "g"}
	if _, err := user.PrepareContract(k); err != nil || k.Model.Cassette != outside {
		t.Fatalf("user config cassette: %v, %q", err, k.Model.Cassette)
	}
	// An untrusted workspace config may not.
	home, ws2 := t.TempDir(), t.TempDir()
	write(t, WorkspacePath(ws2), "model: {cassette: "+outside+"}\n")
	env := map[string]string{"XDG_CONFIG_HOME": home, "HOME": home}
	wsCfg, err := Load(LoadOptions{WorkspaceRoot: ws2, Getenv: func(k string) string { return env[k] }})
	if err != nil {
		t.Fatal(err)
	}
	k = &contract.Contract{Goal: "g"}
	if _, err := wsCfg.PrepareContract(k); !errors.Is(err, ErrCassetteOutside) {
		t.Fatalf("workspace config cassette outside: %v", err)
	}
	// Nor may the editor settings of an untrusted workspace (an editor
	// merges the repository's .vscode/settings.json into them) ...
	ws3 := t.TempDir()
	editor := json.RawMessage(`{"model": {"cassette": "` + outside + `"}}`)
	edCfg, err := Load(LoadOptions{WorkspaceRoot: ws3, Editor: editor, Getenv: func(k string) string { return env[k] }})
	if err != nil {
		t.Fatal(err)
	}
	k = &contract.Contract{Goal: "g"}
	if _, err := edCfg.PrepareContract(k); !errors.Is(err, ErrCassetteOutside) {
		t.Fatalf("untrusted editor settings cassette outside: %v, %q", err, k.Model.Cassette)
	}
	// ... while those of a trusted one may.
	write(t, filepath.Join(home, "ioh", "config.yaml"), "trusted: ["+ws3+"]\n")
	edCfg, err = Load(LoadOptions{WorkspaceRoot: ws3, Editor: editor, Getenv: func(k string) string { return env[k] }})
	if err != nil {
		t.Fatal(err)
	}
	k = &contract.Contract{Goal: "g"}
	if _, err := edCfg.PrepareContract(k); err != nil || k.Model.Cassette != outside {
		t.Fatalf("trusted editor settings cassette: %v, %q", err, k.Model.Cassette)
	}
}
