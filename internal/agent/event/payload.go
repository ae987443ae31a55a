package event

// The payload types: one struct per event type, the fields an emitter
// fills and a reader reads (docs/trace-json.md lists them). Their JSON
// keys are the keys of the JSON Lines format; an embedded pointer holds
// fields that appear together or not at all (a nil pointer writes none).
// Every payload is used by pointer: only *T implements Payload.

// Event types.
const (
	TypeRunStarted    = "run_started"
	TypeWarning       = "warning"
	TypeModelTurn     = "model_turn"
	TypeToolCall      = "tool_call"
	TypeToolResult    = "tool_result"
	TypePolicy        = "policy"
	TypeBudget        = "budget"
	TypeBudgetRaised  = "budget_raised"
	TypeRetry         = "retry"
	TypeVerification  = "verification"
	TypeProposal      = "proposal"
	TypeApproval      = "approval"
	TypeApplyMismatch = "apply_mismatch"
	TypeUndo          = "undo"
	TypeAgentSpawned  = "agent_spawned"
	TypeOutcome       = "outcome"
)

// Payload is an event's own fields: a pointer to one of the payload
// types below.
type Payload interface {
	// EventType is the type of the events that carry this payload.
	EventType() string
}

// payloadFor returns a new payload for a stored event of type typ whose
// keys are has; nil for a type this build does not know.
func payloadFor(typ string, has func(key string) bool) Payload {
	switch typ {
	case TypeRunStarted:
		return &RunStarted{}
	case TypeWarning:
		return &Warning{}
	case TypeModelTurn:
		return &ModelTurn{}
	case TypeToolCall:
		return &ToolCall{}
	case TypeToolResult:
		return &ToolResult{}
	case TypePolicy:
		return &Policy{}
	case TypeBudget:
		return &Budget{}
	case TypeBudgetRaised:
		return &BudgetRaised{}
	case TypeRetry:
		return &Retry{}
	case TypeVerification:
		if has("check") {
			return &CheckRun{}
		}
		return &Verdict{}
	case TypeProposal:
		return &Proposal{}
	case TypeApproval:
		return &Approval{}
	case TypeApplyMismatch:
		return &ApplyMismatch{}
	case TypeUndo:
		return &Undo{}
	case TypeAgentSpawned:
		return &AgentSpawned{}
	case TypeOutcome:
		return &Outcome{}
	case TypeTextDelta:
		return &TextDelta{}
	case TypeCheckStarted:
		return &CheckStarted{}
	case TypeNetConn:
		return &NetConn{}
	case TypeReviewOpened:
		return &ReviewOpened{}
	case TypePartialApply:
		return &PartialApply{}
	case TypeUserTurn:
		return &UserTurn{}
	}
	return nil
}

// RunStarted: a run or a sub-agent started.
type RunStarted struct {
	Goal string `json:"goal"`
	// RunModel is a root run's provider and model; nil for a sub-agent.
	*RunModel
	// Depth is a sub-agent's depth (1 for a root run's child); a root
	// run's is 0 and not written.
	Depth int `json:"depth,omitempty"`
	// Traceparent and Tracestate are the W3C trace context the run
	// continues (an ACP client's), when it has one.
	Traceparent string `json:"traceparent,omitempty"`
	Tracestate  string `json:"tracestate,omitempty"`
	// RunInstructions names the project instructions the run's prompt
	// holds (nil: none found).
	*RunInstructions
}

// RunInstructions are the project-instruction files a run found.
type RunInstructions struct {
	Instructions []InstructionFile `json:"instructions"`
}

// RunModel is the provider and model a root run starts with.
type RunModel struct {
	Provider string `json:"provider"`
	Model    string `json:"model"`
}

// Warning: a setting was ignored, or something the user should see did
// not stop the run.
type Warning struct {
	Message string `json:"message"`
}

// ModelTurn: the model answered.
type ModelTurn struct {
	Text             string `json:"text"`
	ToolCalls        int    `json:"tool_calls"` // how many
	Provider         string `json:"provider"`
	Model            string `json:"model"`
	InputTokens      int64  `json:"input_tokens"`
	OutputTokens     int64  `json:"output_tokens"`
	CacheReadTokens  int64  `json:"cache_read_tokens"`
	CacheWriteTokens int64  `json:"cache_write_tokens"`
	// CostUSD is this call's cost; nil when nothing could price it.
	CostUSD    *float64 `json:"cost_usd"`
	CostSource string   `json:"cost_source"`
}

// ToolCall: a tool is called.
type ToolCall struct {
	Tool string `json:"tool"`
	ID   string `json:"id"`
	// Arguments is a preview of the call's JSON arguments (at most
	// 2,000 bytes, so not always valid JSON).
	Arguments string `json:"arguments"`
}

// ToolResult: a tool answered.
type ToolResult struct {
	Tool    string `json:"tool"`
	ID      string `json:"id"`
	IsError bool   `json:"is_error"`
	Bytes   int    `json:"bytes"`
	Content string `json:"content"` // a preview of at most 500 bytes
	// Wrote lists the workspace paths (root-relative, slash-separated)
	// the call changed in the run's change set: the file of write_file,
	// edit_file and delete_file, both names of rename_file, every file of
	// apply_patch, and for spawn_agent the files the sub-agent changed
	// that were merged. Empty for reads and failed calls.
	Wrote []string `json:"wrote,omitempty"`
}

// Policy: a tool call's act was judged.
type Policy struct {
	Tool   string `json:"tool"`
	Act    string `json:"act"`
	Target string `json:"target"`
	Effect string `json:"effect"`
	// Rule is "effect act pattern" of the deciding rule, "" for a
	// layer's default.
	Rule   string `json:"rule"`
	Layer  string `json:"layer"`
	Reason string `json:"reason,omitempty"`
}

// Budget: a model call was charged. Tokens, CostUSD and CostSource are
// the call's; the rest are running totals after it, which only grow.
type Budget struct {
	// Tokens is what the token budget counts: uncached input, cache
	// writes and output; CacheReadTokens (not counted) beside it.
	Tokens          int64 `json:"tokens"`
	CacheReadTokens int64 `json:"cache_read_tokens,omitempty"`
	// CostUSD is nil when nothing could price the call.
	CostUSD    *float64 `json:"cost_usd"`
	CostSource string   `json:"cost_source"`
	Steps      int      `json:"steps"` // the run's steps, this one included
	// RunTokens and RunCostUSD are this run's own spend so far.
	RunTokens  int64   `json:"run_tokens"`
	RunCostUSD float64 `json:"run_cost_usd"`
	// RunCacheReadTokens are this run's cache reads so far (not counted
	// in RunTokens).
	RunCacheReadTokens int64 `json:"run_cache_read_tokens,omitempty"`
	// TreeTokens and TreeCostUSD are the spend so far of the budget this
	// run draws on: its share of the tree's ledger and its sub-agents'.
	TreeTokens  int64   `json:"tree_tokens"`
	TreeCostUSD float64 `json:"tree_cost_usd"`
	// RootRun is the tree's root run; Root* its whole tree's spend so
	// far, RootCostKnown false once a call of the tree was unpriced.
	RootRun       string  `json:"root_run"`
	RootTokens    int64   `json:"root_tokens"`
	RootCostUSD   float64 `json:"root_cost_usd"`
	RootCostKnown bool    `json:"root_cost_known"`
	// BudgetLimits is the run's budget; nil when it has none.
	*BudgetLimits
}

// BudgetLimits are a run's limits in a budget event (0: no limit).
type BudgetLimits struct {
	LimitSteps   int     `json:"limit_steps"`
	LimitTokens  int64   `json:"limit_tokens"`
	LimitCostUSD float64 `json:"limit_cost_usd"`
	LimitWall    string  `json:"limit_wall,omitempty"` // a Go duration
}

// Limits returns b's limits, the zero value when it has none.
func (b *Budget) Limits() BudgetLimits {
	if b == nil || b.BudgetLimits == nil {
		return BudgetLimits{}
	}
	return *b.BudgetLimits
}

// BudgetRaised: a resume raised a run's budget.
type BudgetRaised struct {
	From BudgetSpec `json:"from"`
	To   BudgetSpec `json:"to"`
	Was  string     `json:"was"` // the run's outcome before
}

// BudgetSpec is a budget in a budget_raised event (0: no limit), its
// fields in the order of their keys.
type BudgetSpec struct {
	CostUSD float64 `json:"cost_usd"`
	Steps   int     `json:"steps"`
	Tokens  int64   `json:"tokens"`
	Wall    string  `json:"wall,omitempty"` // a Go duration
}

// Retry: a provider call failed and is retried (Attempt set), or the
// transcript was compacted (Action set).
type Retry struct {
	// Class is rate_limited, server, transport, timeout, malformed or
	// context_overflow.
	Class  string `json:"class"`
	Action string `json:"action,omitempty"`
	*RetryAttempt
}

// RetryAttempt is a failed provider call that is retried.
type RetryAttempt struct {
	Provider string `json:"provider"`
	Model    string `json:"model"`
	Attempt  int    `json:"attempt"`
	Error    string `json:"error"`
	DelayMS  int64  `json:"delay_ms"`
	Next     string `json:"next"` // the fallback provider tried next, "" for the same
}

// CheckRun: one check ran (a verification event with `check`).
type CheckRun struct {
	Check      string     `json:"check"`
	Phase      string     `json:"phase"` // red before the change, green after
	Passed     bool       `json:"passed"`
	ExitCode   int        `json:"exit_code"`
	DurationMS int64      `json:"duration_ms"`
	Locations  []Location `json:"locations"`
	Backend    string     `json:"backend"`
	CheckEvidence
}

// CheckEvidence is where a check run's verdict comes from.
type CheckEvidence struct {
	// Evidence is per-test results (go test -json, junit, tap) or
	// "exit code only".
	Evidence string       `json:"evidence"`
	Tests    *TestSummary `json:"tests,omitempty"`
	Fixed    []string     `json:"fixed,omitempty"`    // tests failing before the change, passing after
	Problems []string     `json:"problems,omitempty"` // why a run that exited well still fails
	// Flaky: tests that passed before the change, failed after it, then
	// passed on a rerun ("failed, then passed on rerun: flaky").
	Flaky []string `json:"flaky,omitempty"`
	// Preflight says in words why a red-phase run failed without a
	// failing test (program not found, module missing, build failure).
	Preflight string `json:"preflight,omitempty"`
}

// Location is a file position found in a check's output.
type Location struct {
	Path    string `json:"path"`
	Line    int    `json:"line"`
	Col     int    `json:"col,omitempty"`
	Message string `json:"message"`
	// Test is the failing test whose own output carries the location.
	Test string `json:"test,omitempty"`
}

// TestSummary summarises a check run's per-test results.
type TestSummary struct {
	Ran        int      `json:"ran"`
	Passed     int      `json:"passed"`
	Skipped    int      `json:"skipped"`
	Failed     []string `json:"failed,omitempty"`
	FailedMore int      `json:"failed_more,omitempty"`
}

// Verdict: all checks ran (a verification event without `check`).
type Verdict struct {
	Passed bool `json:"passed"`
	// Proves is false when red/green found a check passing before the
	// change.
	Proves        bool           `json:"proves"`
	Checks        []CheckSummary `json:"checks"`
	Warnings      []string       `json:"warnings"`
	TouchesChecks []string       `json:"touches_checks,omitempty"`
	// Rebased marks the verification of a change rebased onto the
	// user's typing.
	Rebased bool `json:"rebased,omitempty"`
}

// CheckSummary is one check run in a verdict (CheckRun's fields, the
// locations counted). Its fields are in the order of their keys, as the
// format has always written them.
type CheckSummary struct {
	Backend string `json:"backend"`
	// Downgrade says why the sandbox passed over stronger tiers.
	Downgrade  string       `json:"downgrade,omitempty"`
	DurationMS int64        `json:"duration_ms"`
	Evidence   string       `json:"evidence"`
	ExitCode   int          `json:"exit_code"`
	Fixed      []string     `json:"fixed,omitempty"`
	Flaky      []string     `json:"flaky,omitempty"`
	Locations  int          `json:"locations"` // how many
	Name       string       `json:"name"`
	Passed     bool         `json:"passed"`
	Phase      string       `json:"phase"`
	Preflight  string       `json:"preflight,omitempty"`
	Problems   []string     `json:"problems,omitempty"`
	Tests      *TestSummary `json:"tests,omitempty"`
}

// Proposal: a finished change is offered.
type Proposal struct {
	Files         []string `json:"files"`
	Verified      bool     `json:"verified"`
	Summary       string   `json:"summary"`
	Evidence      []string `json:"evidence,omitempty"`
	TouchesChecks []string `json:"touches_checks,omitempty"`
}

// Approval: an Ask-tier act (Tool, Act, Target) or the change (Change)
// was answered.
type Approval struct {
	Change bool   `json:"change,omitempty"`
	Tool   string `json:"tool,omitempty"`
	Act    string `json:"act,omitempty"`
	Target string `json:"target,omitempty"`
	Answer string `json:"answer"`
	Reason string `json:"reason"`
	// Recorded: answered by approve/reject while the run was stopped.
	Recorded bool `json:"recorded,omitempty"`
}

// ApplyMismatch: an applied edit was read back and is not the verified
// change (docs/lsp.md).
type ApplyMismatch struct {
	Files        []string `json:"files"`
	Answer       string   `json:"answer"`
	RestoreError string   `json:"restore_error,omitempty"`
}

// AgentSpawned: spawn_agent started a child; Steps, Tokens and CostUSD
// are its budget share.
type AgentSpawned struct {
	Child   string   `json:"child"`
	Goal    string   `json:"goal"`
	Depth   int      `json:"depth"`
	Scope   []string `json:"scope"`
	Steps   int      `json:"steps"`
	Tokens  int64    `json:"tokens"`
	CostUSD float64  `json:"cost_usd"`
	// Mode is "explore" for an exploring child ("" for an editing one).
	Mode string `json:"mode,omitempty"`
}

// Outcome: the run ended.
type Outcome struct {
	Outcome string  `json:"outcome"`
	Steps   int     `json:"steps"`
	Tokens  int64   `json:"tokens"`
	CostUSD float64 `json:"cost_usd"`
	Summary string  `json:"summary,omitempty"`
	Error   string  `json:"error,omitempty"`
	// Limit is the limit that stopped a run ended budget_exceeded
	// (steps, tokens, cost_usd, wall): readers act on it, not on Error's
	// text.
	Limit string `json:"limit,omitempty"`
	// Reason says why a run was closed by another (a sub-agent a crash
	// left in flight).
	Reason string `json:"reason,omitempty"`
	// Network summarises the run's connections through its network
	// proxy (NetSummary.Text); absent when it made none.
	Network string `json:"network,omitempty"`
}

// EventType implementations.

func (*RunStarted) EventType() string    { return TypeRunStarted }
func (*Warning) EventType() string       { return TypeWarning }
func (*ModelTurn) EventType() string     { return TypeModelTurn }
func (*ToolCall) EventType() string      { return TypeToolCall }
func (*ToolResult) EventType() string    { return TypeToolResult }
func (*Policy) EventType() string        { return TypePolicy }
func (*Budget) EventType() string        { return TypeBudget }
func (*BudgetRaised) EventType() string  { return TypeBudgetRaised }
func (*Retry) EventType() string         { return TypeRetry }
func (*CheckRun) EventType() string      { return TypeVerification }
func (*Verdict) EventType() string       { return TypeVerification }
func (*Proposal) EventType() string      { return TypeProposal }
func (*Approval) EventType() string      { return TypeApproval }
func (*ApplyMismatch) EventType() string { return TypeApplyMismatch }
func (*AgentSpawned) EventType() string  { return TypeAgentSpawned }
func (*Outcome) EventType() string       { return TypeOutcome }
