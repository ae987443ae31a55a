package config

import (
	"errors"
	"fmt"
	"path/filepath"

	"github.com/ioh-lsp/ioh-lsp/internal/agent/contract"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/policy"
	"github.com/ioh-lsp/ioh-lsp/internal/workspace"
)

// ApplyToContract fills c's unset fields from the configuration and, when
// the contract is not trusted (a task file in an untrusted workspace: see
// ContractTrusted), enforces what a repository may not choose. It returns
// warnings for everything it ignored.
//
//   - The endpoint is one unit (docs/policy.md#configuration):
//     model.provider, model.base_url and model.api_key_env. An untrusted
//     contract's unit is always the configuration's, with a warning for
//     each of the three it wrote
//     differently, so a base URL is never mixed with another file's
//     provider or key variable; when that replaces the contract's
//     provider with another one, the contract's model name (which names
//     a model of its own provider) yields to the configuration's too.
//     model.fallback from an untrusted contract is dropped, and so are
//     its allow policy rules.
//   - Any contract: an api_key_env not ending in _API_KEY or _TOKEN is
//     dropped (the provider's default variable is used).
//   - Unset model fields take the configuration's values; a contract that
//     names the configuration's provider takes the configuration's base
//     URL and key variable where it sets none. A budget field the
//     contract omitted (contract.Contract.Omitted) takes the
//     configuration's value when it sets one; a written one stands, even
//     when it equals the default.
func (c *Config) ApplyToContract(k *contract.Contract, trusted bool) []string {
	var warnings []string
	name := k.Path
	if name == "" {
		name = "inline contract"
	}
	warn := func(key, why string) {
		warnings = append(warnings, fmt.Sprintf("%s: %s ignored: %s.", name, key, why))
	}
	why := "a task file from an untrusted workspace cannot choose where requests go; set it in the user config " + c.userPath + ", or list the workspace under `trusted:` there"
	m := &k.Model
	if !trusted {
		conf := c.Model
		differs := func(key, wrote, want string) {
			if wrote != "" && wrote != want {
				warn(key, why)
			}
		}
		differs("model.provider", m.Provider, conf.Provider)
		differs("model.base_url", m.BaseURL, conf.BaseURL)
		differs("model.api_key_env", m.APIKeyEnv, conf.APIKeyEnv)
		if m.Provider != "" && m.Provider != conf.Provider && m.Name != "" && conf.Name != "" && m.Name != conf.Name {
			warn("model.name", fmt.Sprintf("it names a model of provider %q, which the configuration replaced, so the configuration's model is used", m.Provider))
			m.Name = conf.Name
		}
		m.Provider, m.BaseURL, m.APIKeyEnv = conf.Provider, conf.BaseURL, conf.APIKeyEnv
		if len(m.Fallback) > 0 {
			warn("model.fallback", why)
			m.Fallback = nil
		}
		kept, dropped := policy.Untrusted(policy.LayerRules{Layer: policy.LayerTask, Rules: k.Policy.Rules})
		for _, r := range dropped {
			warn(fmt.Sprintf("policy rule %q", r.String()), "a task file from an untrusted workspace may only add deny and ask rules; "+c.trustFix())
		}
		k.Policy.Rules = kept.Rules
		c.dropNetwork(k, warn)
	}
	if !validKeyEnv(m.APIKeyEnv) {
		warn("model.api_key_env", fmt.Sprintf("%q does not end in _API_KEY or _TOKEN, so the provider's default variable is used; name a variable that does", m.APIKeyEnv))
		m.APIKeyEnv = ""
	}
	var fallbacks []contract.Fallback
	for i, f := range m.Fallback {
		if !validKeyEnv(f.APIKeyEnv) {
			warn(fmt.Sprintf("model.fallback[%d].api_key_env", i), fmt.Sprintf("%q does not end in _API_KEY or _TOKEN, so the provider's default variable is used; name a variable that does", f.APIKeyEnv))
			f.APIKeyEnv = ""
		}
		fallbacks = append(fallbacks, f)
	}
	m.Fallback = fallbacks

	if m.Provider == "" {
		m.Provider = c.Model.Provider
	}
	if m.Provider == c.Model.Provider {
		// The same endpoint: the configuration completes what the
		// contract leaves out (never across providers).
		if m.BaseURL == "" {
			m.BaseURL = c.Model.BaseURL
		}
		if m.APIKeyEnv == "" {
			m.APIKeyEnv = c.Model.APIKeyEnv
		}
	}
	if m.Name == "" {
		m.Name = c.Model.Name
	}
	if m.Cassette == "" {
		m.Cassette = c.Model.Cassette
	}
	if len(m.Fallback) == 0 && len(c.Model.Fallback) > 0 {
		m.Fallback = append([]contract.Fallback(nil), c.Model.Fallback...)
	}

	o := k.Omitted
	if o.Steps && c.Budget.Steps != 0 {
		k.Budget.Steps = c.Budget.Steps
	}
	if o.Tokens && c.Budget.Tokens != 0 {
		k.Budget.Tokens = c.Budget.Tokens
	}
	if o.CostUSD && c.Budget.CostUSD != 0 {
		k.Budget.CostUSD = c.Budget.CostUSD
	}
	if o.Wall && c.Budget.Wall != 0 {
		k.Budget.Wall = c.Budget.Wall
	}
	return warnings
}

// dropNetwork turns off the network of an untrusted contract's checks: a
// repository's task file may not widen what its own checks reach (the
// contract's other network-widening field, an allow net rule, is dropped
// with the other allow rules).
func (c *Config) dropNetwork(k *contract.Contract, warn func(key, why string)) {
	for i := range k.Verify.Checks {
		ck := &k.Verify.Checks[i]
		if !ck.Network {
			continue
		}
		warn(fmt.Sprintf("verify.checks[%d] (%s) network: true", i, ck.Name),
			"a task file from an untrusted workspace cannot turn the network on for its checks, which run without it; "+c.trustFix())
		ck.Network = false
	}
}

// trustFix names what makes a workspace's task files count in full.
func (c *Config) trustFix() string {
	return "to allow it, list the workspace under `trusted:` in the user config " + c.userPath
}

// ErrCassetteOutside is returned for a replay cassette that a task
// contract (a task file or an inline contract) or an untrusted workspace
// config names outside the workspace. Such a cassette is never opened, so
// naming a private file reveals nothing of it.
var ErrCassetteOutside = errors.New("a cassette named by a task contract or the workspace config must be inside the workspace (name one elsewhere with --cassette or in the user config)")

// PrepareContract readies a contract for a run: ApplyToContract, with the
// trust ContractTrusted gives the contract's file, then the cassette. A
// cassette the contract names is resolved against the task file's
// directory (an inline contract's against the workspace) and must lie
// inside the workspace, symlinks included: it becomes the real path
// there. So must one from an untrusted workspace config; one from the
// user config or editor settings is used as written (the command line's
// --cassette is applied later and is the user's own choice too). The
// warnings are returned even when the cassette is refused.
func (c *Config) PrepareContract(k *contract.Contract) ([]string, error) {
	fromContract := k.Model.Cassette != ""
	warnings := c.ApplyToContract(k, c.ContractTrusted(k.Path))
	cas := k.Model.Cassette
	if cas == "" || (!fromContract && c.cassetteFree) {
		return warnings, nil
	}
	if !filepath.IsAbs(cas) {
		base := c.WorkspaceRoot
		if fromContract && k.Path != "" {
			if abs, err := filepath.Abs(k.Path); err == nil {
				base = filepath.Dir(abs)
			}
		}
		if base == "" {
			return warnings, fmt.Errorf("cassette %s: %w", cas, ErrCassetteOutside)
		}
		cas = filepath.Join(base, cas)
	}
	real, err := c.confine(cas)
	if err != nil {
		return warnings, fmt.Errorf("cassette %s: %w", cas, err)
	}
	k.Model.Cassette = real
	return warnings, nil
}

// confine maps an absolute path to its real location inside the
// workspace, refusing one outside it or reaching out of it through a
// symlink.
func (c *Config) confine(abs string) (string, error) {
	if c.WorkspaceRoot == "" {
		return "", ErrCassetteOutside
	}
	root, err := workspace.NewRoot(c.WorkspaceRoot)
	if err != nil {
		return "", err
	}
	rel, err := root.Rel(abs)
	if err != nil {
		return "", ErrCassetteOutside
	}
	real, err := root.Resolve(rel)
	if err != nil {
		return "", ErrCassetteOutside
	}
	return real, nil
}
