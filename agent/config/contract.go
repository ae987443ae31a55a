package config

import (
	"fmt"

	"github.com/ioh-lsp/ioh-lsp/agent/contract"
	"github.com/ioh-lsp/ioh-lsp/agent/policy"
)

// ApplyToContract fills c's unset fields from the configuration and, when
// the contract is not trusted (a task file in an untrusted workspace: see
// ContractTrusted), enforces what a repository may not choose. It returns
// warnings for everything it ignored.
//
//   - Untrusted: model.provider, model.base_url, model.api_key_env and
//     model.fallback written in the contract are replaced by the
//     configuration's, and its allow policy rules are dropped.
//   - Any contract: an api_key_env not ending in _API_KEY or _TOKEN is
//     dropped (the provider's default variable is used).
//   - Unset model fields take the configuration's values. A budget field
//     still at the contract default (contract.DefaultBudget) takes the
//     configuration's value when it sets one: the parsed contract cannot
//     tell "omitted" from "written as the default", so a budget written
//     exactly equal to the default also yields to the config.
func (c *Config) ApplyToContract(k *contract.Contract, trusted bool) []string {
	var warnings []string
	name := k.Path
	if name == "" {
		name = "inline contract"
	}
	warn := func(key, why string) {
		warnings = append(warnings, fmt.Sprintf("%s: %s ignored: %s", name, key, why))
	}
	const why = "task files from an untrusted workspace cannot choose where requests go (set it in the user config or editor settings)"
	m := &k.Model
	if !trusted {
		if m.Provider != "" && m.Provider != c.Model.Provider {
			warn("model.provider", why)
			m.Provider = ""
		}
		if m.BaseURL != "" && m.BaseURL != c.Model.BaseURL {
			warn("model.base_url", why)
			m.BaseURL = ""
		}
		if m.APIKeyEnv != "" && m.APIKeyEnv != c.Model.APIKeyEnv {
			warn("model.api_key_env", why)
			m.APIKeyEnv = ""
		}
		if len(m.Fallback) > 0 {
			warn("model.fallback", why)
			m.Fallback = nil
		}
		kept, dropped := policy.Untrusted(policy.LayerRules{Layer: policy.LayerTask, Rules: k.Policy.Rules})
		for _, r := range dropped {
			warn(fmt.Sprintf("policy rule %q", r.String()), "a task file from an untrusted workspace may only add deny and ask rules")
		}
		k.Policy.Rules = kept.Rules
	}
	if !validKeyEnv(m.APIKeyEnv) {
		warn("model.api_key_env", fmt.Sprintf("%q does not end in _API_KEY or _TOKEN", m.APIKeyEnv))
		m.APIKeyEnv = ""
	}
	var fallbacks []contract.Fallback
	for i, f := range m.Fallback {
		if !validKeyEnv(f.APIKeyEnv) {
			warn(fmt.Sprintf("model.fallback[%d].api_key_env", i), fmt.Sprintf("%q does not end in _API_KEY or _TOKEN", f.APIKeyEnv))
			f.APIKeyEnv = ""
		}
		fallbacks = append(fallbacks, f)
	}
	m.Fallback = fallbacks

	if m.Provider == "" {
		m.Provider = c.Model.Provider
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

	def := contract.DefaultBudget()
	if k.Budget.Steps == def.Steps && c.Budget.Steps != 0 {
		k.Budget.Steps = c.Budget.Steps
	}
	if k.Budget.Tokens == def.Tokens && c.Budget.Tokens != 0 {
		k.Budget.Tokens = c.Budget.Tokens
	}
	if k.Budget.CostUSD == def.CostUSD && c.Budget.CostUSD != 0 {
		k.Budget.CostUSD = c.Budget.CostUSD
	}
	if k.Budget.Wall == def.Wall && c.Budget.Wall != 0 {
		k.Budget.Wall = c.Budget.Wall
	}
	return warnings
}
