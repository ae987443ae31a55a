package agent

import (
	"context"

	"github.com/ioh-lsp/ioh-lsp/internal/agent/policy"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/verify"
	"github.com/ioh-lsp/ioh-lsp/internal/workspace"
)

// Approver is asked for consent: for each Ask-tier act during a run, and
// for the final change. The editor, the terminal and deferral implement it.
type Approver interface {
	ApproveAct(ctx context.Context, req *ActRequest) (Decision, error)
	ApproveChange(ctx context.Context, p *Proposal) (Decision, error)
}

// ActRequest is an Ask-tier act waiting for an answer.
type ActRequest struct {
	Run     string
	Step    int
	Tool    string
	Verdict policy.Verdict // Act, Target and the deciding rule
}

// Proposal is a finished run's change offered for approval.
type Proposal struct {
	Run     string
	Goal    string
	Summary string
	// Changes is the very set the harness applies (and snapshots for
	// undo) on AllowOnce: an approver that accepts only part of the
	// change narrows it here first, reverting each dropped file to its
	// base, and records what it dropped (acp/perfile.go).
	Changes  *workspace.ChangeSet
	Report   *verify.Report // nil when the contract has no checks
	Verified bool
}

// Answer is an approver's answer.
type Answer string

const (
	// AllowOnce allows this act (or applies the change through the harness).
	AllowOnce Answer = "allow_once"
	// AllowRun allows this act and every later match in this run; it is
	// remembered as the highest layer but still loses to a deny.
	AllowRun Answer = "allow_run"
	// Deny refuses; Reason is shown to the model (acts) or recorded (change).
	Deny Answer = "deny"
	// Defer stops the run as awaiting_approval; resume continues it.
	Defer Answer = "defer"
	// Applied means the approver applied the change itself (the editor's
	// workspace/applyEdit); the harness records the outcome and writes
	// nothing.
	Applied Answer = "applied"
)

// Decision is an Answer with an optional reason.
type Decision struct {
	Answer Answer
	Reason string
	// By is who gave a denial, as the model reads it ("denied by BY"):
	// an approval mode for an automatic one ("--approve never"); empty
	// is the user.
	By string `json:",omitempty"`
}
