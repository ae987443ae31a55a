package config

import (
	"sync"

	"github.com/ioh-lsp/ioh-lsp/internal/agent/contract"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/policy"
)

// Settings is one configuration layer as written: the user file, the
// editor's `ioh` settings section, the workspace's .ioh/config.yaml
// (docs/policy.md#configuration). It is the one declaration of the keys
// and their types: decode reads a layer into it strictly (an unknown key
// or a wrong type is an error with its position), merge checks the
// enumerated keys against Choices, and schema/settings.schema.json is
// generated from it (internal/schemagen), so the editors' tests check the
// settings they send against exactly what the server reads.
type Settings = file

// Choices are the values an enumerated key takes, by its dotted path
// ("policy.rules.act": the act of each rule); "" for a provider leaves
// the choice to the next layer. These tables are built on first use, not
// in the package's init (which every start of the binary runs).
var Choices = sync.OnceValue(func() map[string][]string {
	return map[string][]string{
		"approve":                 {ApproveAsk, ApproveAuto, ApproveNever},
		"model.provider":          append([]string{""}, contract.Providers...),
		"model.fallback.provider": append([]string{""}, contract.Providers...),
		"policy.rules.act":        {string(policy.ActRead), string(policy.ActWrite), string(policy.ActExec), string(policy.ActNet)},
		"policy.rules.effect":     {string(policy.Allow), string(policy.Ask), string(policy.Deny)},
		"sandbox.require":         {"linux", "landlock", "floor"},
	}
})

// Defaults are the values a key has when no layer sets it.
var Defaults = sync.OnceValue(func() map[string]any {
	return map[string]any{
		"approve":         ApproveAsk,
		"sandbox.require": RequireDefault,
		"budget.steps":    contract.DefaultSteps,
		"budget.tokens":   contract.DefaultTokens,
		"budget.cost_usd": contract.DefaultCostUSD,
		"budget.wall":     contract.DefaultWall.String(),
	}
})

// KeyEnvPattern is what model.api_key_env (and a fallback's) must match:
// a variable ending in _API_KEY or _TOKEN, so a configuration cannot send
// an arbitrary variable as a token (validKeyEnv).
const KeyEnvPattern = `^$|(_API_KEY|_TOKEN)$`

// Patterns are the keys whose strings must match a regular expression.
var Patterns = sync.OnceValue(func() map[string]string {
	return map[string]string{
		"model.api_key_env":          KeyEnvPattern,
		"model.fallback.api_key_env": KeyEnvPattern,
	}
})

// Docs say what a key is for, in the settings schema.
var Docs = sync.OnceValue(func() map[string]string {
	return map[string]string{
		"model":                    "the default model of runs whose contract names none",
		"model.first_byte_timeout": "how long a provider call may wait for its answer to start before it is retried (a Go duration; default 60s; user config or a trusted workspace)",
		"model.idle_timeout":       "how long a provider's stream may stay silent before the call is retried (a Go duration; default 60s; user config or a trusted workspace)",
		"approve":                  "ask: review each change in the editor; never: leave it pending; auto is honoured only from the user config",
		"budget":                   "default budgets of a run (a contract's own budget wins)",
		"budget.wall":              "a Go duration such as 15m",
		"policy.rules":             "policy rules of this layer: {act, effect, pattern}",
		"trusted":                  "workspace roots whose .ioh/config.yaml and editor settings may choose the endpoint, add allow rules and MCP servers and widen the sandbox (read from the user config only)",
		"prices":                   "per-model prices in dollars per million tokens, over the built-in table",
		"sandbox":                  "extra masked, writable and readable paths and default limits of the sandbox",
		"sandbox.require":          "the weakest sandbox tier model-produced code may run under (read from the user config only)",
		"mcp":                      "MCP servers whose tools the agent may call (the user config, and the editor settings of a trusted workspace)",
		"telemetry":                "OpenTelemetry export of runs (user config only)",
		"harness":                  "parts of the harness switched off to measure them (user config only; both default true)",
		"harness.masking":          "false keeps every old tool result whole in the requests (observation masking off)",
		"harness.review_changes":   "false skips showing the model its diff once before the checks run",
		"network":                  "the hosts sandboxed commands (a check's network: true, the run tool) may reach through the run's egress proxy; nothing by default",
		"network.allow":            "host or host:port globs, or presets (preset:go, preset:npm, preset:pypi, preset:crates), allowed through the proxy (dropped from an untrusted workspace's layers)",
		"network.deny":             "host or host:port globs refused through the proxy in every case (a deny wins)",
	}
})
