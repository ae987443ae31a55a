// Package policy decides whether the agent may read, write, execute or
// reach the network: layered rules (built-in, user, editor, workspace, task,
// remembered) where deny wins, then ask, then allow, then the act's default
// (docs/policy.md). Policy is plain data with a validator; enforcement lives with
// the tools that consult it.
package policy

// Act is what the agent wants to do.
type Act string

const (
	ActRead  Act = "read"
	ActWrite Act = "write"
	ActExec  Act = "exec"
	ActNet   Act = "net"
)

// Effect is a rule's decision; allow < ask < deny.
type Effect string

const (
	Allow Effect = "allow"
	Ask   Effect = "ask"
	Deny  Effect = "deny"
)

// Rule matches an act on a target: a ** glob on the workspace-relative path
// for read/write, an argv pattern for exec, a host[:port] glob for net.
type Rule struct {
	Act     Act    `json:"act" yaml:"act"`
	Effect  Effect `json:"effect" yaml:"effect"`
	Pattern string `json:"pattern" yaml:"pattern"`
}

// Layer names where a rule came from, low to high.
type Layer string

const (
	LayerBuiltin    Layer = "builtin"
	LayerUser       Layer = "user"
	LayerEditor     Layer = "editor"
	LayerWorkspace  Layer = "workspace"
	LayerTask       Layer = "task"
	LayerRemembered Layer = "remembered"
	// LayerGrant marks a verdict the user's one-time grant decided (the
	// editor's "Allow once"): not a layer of rules, the name a granted
	// act's verdict carries (see Policy.Granting).
	LayerGrant Layer = "grant"
	// LayerDefault marks a verdict that no rule matched.
	LayerDefault Layer = "default"
)

// Verdict is a decision with what decided it.
type Verdict struct {
	Act    Act    `json:"act"`
	Target string `json:"target"`
	Effect Effect `json:"effect"`
	Rule   *Rule  `json:"rule,omitempty"`
	Layer  Layer  `json:"layer"`
	Reason string `json:"reason,omitempty"`
}

// LayerRules is one layer's rules.
type LayerRules struct {
	Layer Layer  `json:"layer"`
	Rules []Rule `json:"rules"`
}
