package contract

import (
	"time"

	"github.com/ioh-lsp/ioh-lsp/internal/agent/contain"
)

// Defaults for omitted fields (documented in docs/contract.md), each named
// once: the harness's sub-agent tree and the configuration step use these.
// A budget written as 0 means unlimited; only an omitted one gets the
// default (Contract.Omitted says which were).
const (
	DefaultVersion       = 1
	DefaultSteps         = 50
	DefaultTokens        = 500_000
	DefaultCostUSD       = 5.00
	DefaultWall          = 30 * time.Minute
	DefaultRetryMax      = 4
	DefaultRetryBase     = 500 * time.Millisecond
	DefaultRetryCap      = 30 * time.Second
	DefaultCheckTimeout  = contain.MaxTimeout
	DefaultExpectExit    = 0
	DefaultMaxTotal      = 8
	DefaultMaxDepth      = 2
	DefaultMaxConcurrent = 4
)

// Providers lists the model.provider values a contract may name.
var Providers = []string{"anthropic", "openai", "openrouter", "openai-compatible", "replay"}

// DefaultBudget is the budget of a contract that names none.
func DefaultBudget() Budget {
	return Budget{Steps: DefaultSteps, Tokens: DefaultTokens, CostUSD: DefaultCostUSD, Wall: DefaultWall}
}

// DefaultRetry is the retry policy of a contract that names none.
func DefaultRetry() Retry {
	return Retry{Max: DefaultRetryMax, Base: DefaultRetryBase, Cap: DefaultRetryCap}
}

// DefaultAgents is the sub-agent cap of a contract that names none.
func DefaultAgents() Agents {
	return Agents{MaxTotal: DefaultMaxTotal, MaxDepth: DefaultMaxDepth, MaxConcurrent: DefaultMaxConcurrent}
}

// ParseDuration parses a Go duration as contracts and configs write them
// (500ms, 5m, 1h30m); negative durations are rejected.
func ParseDuration(s string) (time.Duration, error) {
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, err
	}
	if d < 0 {
		return 0, errNegative
	}
	return d, nil
}
