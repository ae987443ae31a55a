// Package contract parses and validates task contracts (docs/contract.md): YAML or
// JSON of one shape, checked against schema/task.schema.json, with errors
// that name the file, line, column and field, and defaults filled in.
package contract

import (
	"time"

	"github.com/ioh-lsp/ioh-lsp/internal/agent/policy"
)

// Contract is a parsed, validated task contract with defaults applied.
type Contract struct {
	Version     int      `json:"version"`
	Goal        string   `json:"goal"`
	Context     []string `json:"context,omitempty"`
	Constraints []string `json:"constraints,omitempty"`
	Scope       Scope    `json:"scope"`
	Verify      Verify   `json:"verify"`
	Budget      Budget   `json:"budget"`
	Retry       Retry    `json:"retry"`
	Model       Model    `json:"model"`
	Policy      Policy   `json:"policy"`
	Agents      Agents   `json:"agents"`

	// Path is the file the contract came from ("" for inline contracts).
	Path string `json:"-"`
	// Omitted says which budget fields the contract left out: Parse fills
	// them with the defaults and records it here, so a later layer (the
	// configuration's budget) replaces exactly these. A Contract built in
	// code omits nothing.
	Omitted BudgetOmitted `json:"-"`
}

// BudgetOmitted names the budget fields a contract did not write.
type BudgetOmitted struct {
	Steps, Tokens, CostUSD, Wall bool
}

// Scope narrows where the agent may write.
type Scope struct {
	Write []string `json:"write,omitempty"`
}

// Verify lists the checks that decide whether the change is verified.
type Verify struct {
	Checks   []Check  `json:"checks,omitempty"`
	RedGreen bool     `json:"red_green,omitempty"`
	Protect  []string `json:"protect,omitempty"`
}

// Check is one verification command, run in the sandbox.
type Check struct {
	Name       string        `json:"name"`
	Run        []string      `json:"run,omitempty"`
	Shell      string        `json:"shell,omitempty"`
	ExpectExit int           `json:"expect_exit"`
	Timeout    time.Duration `json:"timeout"`
	Network    bool          `json:"network,omitempty"`
	// Report says where per-test results come from: "junit:PATH" (a JUnit
	// XML report the check writes at PATH, relative to the workspace; a
	// glob names several files), "tap" (TAP on the check's output) or
	// "none" (exit code only). Empty: `go test` argv gets -json, pytest a
	// JUnit report in the sandbox's /tmp; any other check is exit code only.
	Report string `json:"report,omitempty"`
}

// Budget caps a run; zero means unlimited for that dimension.
type Budget struct {
	Steps   int           `json:"steps"`
	Tokens  int64         `json:"tokens"`
	CostUSD float64       `json:"cost_usd"`
	Wall    time.Duration `json:"wall"`
}

// Retry configures provider retries.
type Retry struct {
	Max  int           `json:"max"`
	Base time.Duration `json:"base"`
	Cap  time.Duration `json:"cap"`
}

// Model selects the provider and model.
type Model struct {
	Provider  string     `json:"provider"`
	Name      string     `json:"name"`
	BaseURL   string     `json:"base_url,omitempty"`
	APIKeyEnv string     `json:"api_key_env,omitempty"`
	Cassette  string     `json:"cassette,omitempty"`
	Fallback  []Fallback `json:"fallback,omitempty"`
}

// Fallback is one provider tried after the previous one's last retry.
type Fallback struct {
	Provider  string `json:"provider"`
	Name      string `json:"name"`
	BaseURL   string `json:"base_url,omitempty"`
	APIKeyEnv string `json:"api_key_env,omitempty"`
}

// Policy is the contract's policy layer; it can only narrow.
type Policy struct {
	Rules []policy.Rule `json:"rules,omitempty"`
}

// Agents caps the sub-agent tree; MaxTotal counts the root too.
type Agents struct {
	MaxTotal      int `json:"max_total"`
	MaxDepth      int `json:"max_depth"`
	MaxConcurrent int `json:"max_concurrent"`
}
