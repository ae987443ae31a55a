package agent

import (
	"encoding/json"
	"fmt"

	"github.com/ioh-lsp/ioh-lsp/internal/agent/contract"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/model"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/policy"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/verify"
)

// runState is what a resumed run needs besides the transcript, totals and
// change set: it is stored with every step, in the same transaction.
type runState struct {
	// Agent is "" for a root run, the spawn goal for a sub-agent.
	Agent string `json:"agent,omitempty"`
	Depth int    `json:"depth,omitempty"`
	// ContractPath is the contract's file ("" inline).
	ContractPath string `json:"contract_path,omitempty"`
	// Remembered are the "allow for this run" answers, the highest layer.
	Remembered []policy.Rule `json:"remembered,omitempty"`
	// Exact are remembered "act target" answers whose target is not a
	// valid pattern.
	Exact []string `json:"exact,omitempty"`
	// Grants are acts the user allowed once before the run started
	// (StartAllowingOnce), each removed when used.
	Grants []Grant `json:"grants,omitempty"`
	// Stall detection.
	StallSig   string `json:"stall_sig,omitempty"`
	StallFP    string `json:"stall_fp,omitempty"`
	StallCount int    `json:"stall_count,omitempty"`
	Replanned  bool   `json:"replanned,omitempty"`
	// EditFails counts failed edits of EditFile running, the change set
	// unchanged; ErrCount turns running whose first error was ErrSig;
	// ReadOnlySteps steps running with only read-only calls (stall.go).
	EditFile      string `json:"edit_file,omitempty"`
	EditFails     int    `json:"edit_fails,omitempty"`
	ErrSig        string `json:"err_sig,omitempty"`
	ErrCount      int    `json:"err_count,omitempty"`
	ReadOnlySteps int    `json:"read_only_steps,omitempty"`
	// Explore: a sub-agent started in explore mode (read-only tools; its
	// finish reports findings).
	Explore bool `json:"explore,omitempty"`
	// CompactBefore: tool results in messages before this index are
	// masked in requests (runs stored before Masked existed).
	CompactBefore int `json:"compact_before,omitempty"`
	// Masked: the oldest Masked tool results are sent as stubs (mask.go).
	Masked int `json:"masked,omitempty"`
	// MaskedLarge are later results sent as stubs: large ones, masked a
	// few turns after they came (indices among the tool results).
	MaskedLarge []int `json:"masked_large,omitempty"`
	// Pending is a turn interrupted by a deferred approval.
	Pending *pendingTurn `json:"pending,omitempty"`
	// Deferred is the Ask-tier act the run waits on (with Pending), and
	// Answer the answer `approve`/`reject` recorded for it, which the
	// resumed turn takes instead of asking (actanswer.go).
	Deferred *deferredAct `json:"deferred,omitempty"`
	Answer   *Decision    `json:"answer,omitempty"`
	// Phase: "" while looping, "proposal" while the change awaits approval.
	Phase   string         `json:"phase,omitempty"`
	Summary string         `json:"summary,omitempty"`
	Report  *verify.Report `json:"report,omitempty"`
	// Reviewed: the model was shown its diff at a finish (diffreview.go).
	Reviewed bool `json:"reviewed,omitempty"`
	// Verifications counts failed verifications fed back to the model.
	Verifications int  `json:"verifications,omitempty"`
	Denied        bool `json:"denied,omitempty"`
	// Unpriced counts this agent's calls nothing could price (their cost
	// is unknown; listings show the run's cost as unknown, not $0).
	Unpriced int `json:"unpriced,omitempty"`
	// Budget is the run's budget after a resume raised it (nil: the
	// contract's).
	Budget *contract.Budget `json:"budget,omitempty"`
	// NeedCostUSD is the least dollar limit the next call needs, when the
	// cost pre-check refused it (minCostRaise): a resume may not raise
	// the limit to less.
	NeedCostUSD float64 `json:"need_cost_usd,omitempty"`
	// Feedback is what the user said rejecting a change to continue the
	// run, each added to a committed user message (resumefeedback.go).
	Feedback []userFeedback `json:"feedback,omitempty"`
	// Follows is the earlier run a linked run continues the conversation
	// of (followup.go): its transcript comes first.
	Follows string `json:"follows,omitempty"`
	// StopLimit is the limit that stopped a run ended budget_exceeded
	// (BudgetError.Limit), so a run read back from the store says which
	// without its error text being read.
	StopLimit Limit `json:"stop_limit,omitempty"`
}

// pendingTurn is an assistant turn whose tool calls were cut short by a
// deferred approval: the calls answered so far and the rest to redo.
type pendingTurn struct {
	Assistant model.Message      `json:"assistant"`
	Results   []model.ToolResult `json:"results"`
}

const (
	phaseLoop     = ""
	phaseProposal = "proposal"
)

func decodeState(b []byte) (*runState, error) {
	st := &runState{}
	if len(b) == 0 {
		return st, nil
	}
	if err := json.Unmarshal(b, st); err != nil {
		return nil, fmt.Errorf("decode run state: %w", err)
	}
	return st, nil
}

func (s *runState) encode() json.RawMessage {
	b, err := json.Marshal(s)
	if err != nil { // plain data only: cannot fail
		return json.RawMessage("{}")
	}
	return b
}
