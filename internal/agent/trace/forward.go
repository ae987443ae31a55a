package trace

// Forwarding declarations, while the callers move to packages event and
// redact: each name here is the new package's under its old
// name. They go once no caller uses them.

import (
	"github.com/ioh-lsp/ioh-lsp/internal/agent/event"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/redact"
)

// Event types and payloads (package event).
type (
	AgentSpawned    = event.AgentSpawned
	ApplyMismatch   = event.ApplyMismatch
	Approval        = event.Approval
	Budget          = event.Budget
	BudgetLimits    = event.BudgetLimits
	BudgetRaised    = event.BudgetRaised
	BudgetSpec      = event.BudgetSpec
	CheckEvidence   = event.CheckEvidence
	CheckRun        = event.CheckRun
	CheckStarted    = event.CheckStarted
	CheckSummary    = event.CheckSummary
	Event           = event.Event
	Field           = event.Field
	HunkNote        = event.HunkNote
	InstructionFile = event.InstructionFile
	Location        = event.Location
	ModelTurn       = event.ModelTurn
	NetConn         = event.NetConn
	NetSummary      = event.NetSummary
	Outcome         = event.Outcome
	PartialApply    = event.PartialApply
	PartialFile     = event.PartialFile
	Payload         = event.Payload
	Policy          = event.Policy
	Proposal        = event.Proposal
	Retry           = event.Retry
	RetryAttempt    = event.RetryAttempt
	ReviewOpened    = event.ReviewOpened
	RunInstructions = event.RunInstructions
	RunModel        = event.RunModel
	RunStarted      = event.RunStarted
	Sink            = event.Sink
	SinkFunc        = event.SinkFunc
	TestSummary     = event.TestSummary
	TextDelta       = event.TextDelta
	ToolCall        = event.ToolCall
	ToolResult      = event.ToolResult
	Undo            = event.Undo
	UserTurn        = event.UserTurn
	Verdict         = event.Verdict
	Warning         = event.Warning
)

// Event type names (package event).
const (
	EventRunStarted    = event.TypeRunStarted
	EventWarning       = event.TypeWarning
	EventModelTurn     = event.TypeModelTurn
	EventToolCall      = event.TypeToolCall
	EventToolResult    = event.TypeToolResult
	EventPolicy        = event.TypePolicy
	EventBudget        = event.TypeBudget
	EventBudgetRaised  = event.TypeBudgetRaised
	EventRetry         = event.TypeRetry
	EventVerification  = event.TypeVerification
	EventProposal      = event.TypeProposal
	EventApproval      = event.TypeApproval
	EventApplyMismatch = event.TypeApplyMismatch
	EventUndo          = event.TypeUndo
	EventAgentSpawned  = event.TypeAgentSpawned
	EventOutcome       = event.TypeOutcome
	EventReviewOpened  = event.TypeReviewOpened
	EventPartialApply  = event.TypePartialApply
	EventNetConn       = event.TypeNetConn
	EventTextDelta     = event.TypeTextDelta
	EventCheckStarted  = event.TypeCheckStarted
	EventUserTurn      = event.TypeUserTurn
	TurnPending        = event.TurnPending
	TurnApplied        = event.TurnApplied
	TurnRejected       = event.TurnRejected
	TurnCarried        = event.TurnCarried
	TurnNone           = event.TurnNone
)

// New returns an event of run carrying p, stamped now (event.New).
func New(run, parent string, step int, p Payload) Event { return event.New(run, parent, step, p) }

// Transient reports an event type that is never stored (event.Transient).
func Transient(typ string) bool { return event.Transient(typ) }

// The redactor (package redact).
type (
	Redactor = redact.Redactor
	Secret   = redact.Secret
)

// Redactor constants (package redact).
const (
	Redacted  = redact.Redacted
	MinSecret = redact.MinSecret
)

// NewRedactor is redact.New.
func NewRedactor(secrets []string) Redactor { return redact.New(secrets) }

// IsSecretName is redact.IsSecretName.
func IsSecretName(name string) bool { return redact.IsSecretName(name) }

// EnvSecrets is redact.EnvSecrets.
func EnvSecrets(environ []string) []Secret { return redact.EnvSecrets(environ) }

// LookupSecret is redact.LookupSecret.
func LookupSecret(environ []string, name string) (string, bool) {
	return redact.LookupSecret(environ, name)
}

// URLSecrets is redact.URLSecrets.
func URLSecrets(s string) []string { return redact.URLSecrets(s) }

// URLSecretsIn is redact.URLSecretsIn.
func URLSecretsIn(doc []byte) []string { return redact.URLSecretsIn(doc) }

// CredentialURLs is redact.CredentialURLs.
func CredentialURLs(doc []byte) []string { return redact.CredentialURLs(doc) }
