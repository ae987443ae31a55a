package config

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ioh-lsp/ioh-lsp/internal/agent/policy"
)

func netPolicy(t *testing.T, c *Config) *policy.Policy {
	t.Helper()
	p, err := policy.New(c.PolicyLayers()...)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// network.allow with presets and hosts allows exactly those through the
// policy; network.deny wins; nothing else is allowed.
func TestNetworkAllowDenyAndPresets(t *testing.T) {
	dir := t.TempDir()
	user := filepath.Join(dir, "user.yaml")
	write(t, user, `network:
  allow: [preset:go, preset:pypi, "registry.example.com", "*.corp.example:8443"]
  deny: ["bad.corp.example"]
`)
	c, err := Load(LoadOptions{UserPath: user})
	if err != nil {
		t.Fatal(err)
	}
	p := netPolicy(t, c)
	for target, want := range map[string]policy.Effect{
		"proxy.golang.org:443":       policy.Allow,
		"sum.golang.org:443":         policy.Allow,
		"files.pythonhosted.org:443": policy.Allow,
		"registry.example.com:80":    policy.Allow,
		"a.corp.example:8443":        policy.Allow,
		"bad.corp.example:8443":      policy.Deny,
		"a.corp.example:443":         policy.Deny,
		"proxy.golang.org:80":        policy.Deny,
		"registry.npmjs.org:443":     policy.Deny,
	} {
		if v := p.Check(policy.ActNet, target); v.Effect != want {
			t.Errorf("%s: %s (%s), want %s", target, v.Effect, v.Layer, want)
		}
	}
	if v := p.Check(policy.ActNet, "proxy.golang.org:443"); v.Layer != policy.LayerUser || v.Rule == nil || v.Rule.Pattern != "proxy.golang.org:443" {
		t.Errorf("the preset's verdict names %+v, want the user layer's rule", v)
	}
	c, err = Load(LoadOptions{UserPath: filepath.Join(dir, "none.yaml")})
	if err != nil {
		t.Fatal(err)
	}
	if v := netPolicy(t, c).Check(policy.ActNet, "proxy.golang.org:443"); v.Effect != policy.Deny || v.Layer != policy.LayerDefault {
		t.Errorf("with no configuration: %+v, want the default deny", v)
	}
}

// An untrusted workspace's and editor settings' network.allow is dropped
// with a warning naming the fix, their network.deny stands; a trusted
// workspace's allow is kept.
func TestNetworkAllowNeedsTrust(t *testing.T) {
	dir := t.TempDir()
	user := filepath.Join(dir, "user.yaml")
	ws := filepath.Join(dir, "ws")
	write(t, user, "network:\n  allow: [preset:npm]\n")
	write(t, WorkspacePath(ws), "network:\n  allow: [\"evil.example\", preset:go]\n  deny: [registry.npmjs.org]\n")
	editor := json.RawMessage(`{"network":{"allow":["editor.example"]}}`)
	c, err := Load(LoadOptions{UserPath: user, WorkspaceRoot: ws, Editor: editor})
	if err != nil {
		t.Fatal(err)
	}
	p := netPolicy(t, c)
	for _, target := range []string{"evil.example:443", "proxy.golang.org:443", "editor.example:443", "registry.npmjs.org:443"} {
		if v := p.Check(policy.ActNet, target); v.Effect != policy.Deny {
			t.Errorf("untrusted: %s is %s (%s)", target, v.Effect, v.Layer)
		}
	}
	joined := strings.Join(c.Warnings, "\n")
	for _, w := range []string{
		WorkspacePath(ws) + `: network.allow entry "evil.example" ignored: the workspace`,
		WorkspacePath(ws) + `: network.allow entry "preset:go" ignored`,
		EditorSource + `: network.allow entry "editor.example" ignored: editor settings may come from the repository`,
	} {
		if !strings.Contains(joined, w) {
			t.Errorf("warnings lack %q:\n%s", w, joined)
		}
	}

	write(t, user, "trusted: ["+ws+"]\n")
	c, err = Load(LoadOptions{UserPath: user, WorkspaceRoot: ws})
	if err != nil {
		t.Fatal(err)
	}
	if v := netPolicy(t, c).Check(policy.ActNet, "evil.example:443"); v.Effect != policy.Allow || v.Layer != policy.LayerWorkspace {
		t.Errorf("trusted workspace's allow: %+v", v)
	}
}

// A bad entry is an error at its line and column naming the entry.
func TestNetworkEntryErrors(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct{ yaml, want string }{
		{"network:\n  allow: [preset:go, preset:maven]\n", `:2:22: network.allow[1]: unknown preset "preset:maven" (want one of preset:crates, preset:go, preset:npm, preset:pypi)`},
		{"network:\n  deny:\n    - https://x.example/path\n", `:3:7: network.deny[0]: `},
		{"network: {allow: [\"\"]}\n", `network.allow[0]: `},
	} {
		user := filepath.Join(dir, "user.yaml")
		write(t, user, tc.yaml)
		_, err := Load(LoadOptions{UserPath: user})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v, want %q", tc.yaml, err, tc.want)
		}
	}
}

// An untrusted workspace cannot open the network a prompt away either: its
// net ask rules are dropped (the default is deny) while its exec ask rules
// stand; trusted, the net ask rule is kept.
func TestUntrustedNetAskDropped(t *testing.T) {
	dir := t.TempDir()
	user := filepath.Join(dir, "user.yaml")
	ws := filepath.Join(dir, "ws")
	write(t, user, "approve: ask\n")
	write(t, WorkspacePath(ws), "policy:\n  rules:\n    - {act: net, effect: ask, pattern: \"*\"}\n    - {act: exec, effect: ask, pattern: \"make *\"}\n")
	for _, trusted := range []bool{false, true} {
		if trusted {
			write(t, user, "trusted: ["+ws+"]\n")
		}
		c, err := Load(LoadOptions{UserPath: user, WorkspaceRoot: ws})
		if err != nil {
			t.Fatal(err)
		}
		p := netPolicy(t, c)
		net, exec := p.Check(policy.ActNet, "evil.example:443"), p.CheckArgv([]string{"make", "all"})
		if exec.Effect != policy.Ask || exec.Layer != policy.LayerWorkspace {
			t.Errorf("trusted %v: the exec ask rule: %+v", trusted, exec)
		}
		if trusted != (net.Effect == policy.Ask) || (!trusted && net.Layer != policy.LayerDefault) {
			t.Errorf("trusted %v: net %+v", trusted, net)
		}
		warned := strings.Contains(strings.Join(c.Warnings, "\n"), `policy rule "ask net *" ignored`)
		if warned == trusted {
			t.Errorf("trusted %v: warnings %q", trusted, c.Warnings)
		}
	}
}
