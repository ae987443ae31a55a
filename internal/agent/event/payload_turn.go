package event

// TypeUserTurn is stored when a user's follow-up message reaches a run
// (agent.Harness.Continue): each turn of a conversation after the first
// (whose text is the run's goal) is one of these, in the run it went to.
const TypeUserTurn = "user_turn"

// Follow-up changes: what had happened to the earlier change when a
// follow-up came (UserTurn.Change).
const (
	// TurnPending: the change was still pending (awaiting approval, or
	// stopped before it was offered); the turn adds to it in the same run.
	TurnPending = "pending"
	// TurnApplied: the earlier run's change is in the workspace.
	TurnApplied = "applied"
	// TurnRejected: the user rejected the earlier change; it was dropped.
	TurnRejected = "rejected"
	// TurnCarried: the earlier run ended without applying its change; the
	// new run carries it on as its own change set.
	TurnCarried = "carried"
	// TurnNone: the earlier run had no change.
	TurnNone = "none"
)

// UserTurn: the user followed up on a run.
type UserTurn struct {
	// Text is what the user wrote.
	Text string `json:"text"`
	// Follows is the earlier run a new, linked run continues the
	// conversation of; absent when the turn continues the same run.
	Follows string `json:"follows,omitempty"`
	// Change is what had happened to the earlier change (Turn*).
	Change string `json:"change"`
	// Files are the files of the earlier change the statement named.
	Files []string `json:"files,omitempty"`
	// Budget is what this turn may spend (0: no limit): the contract's
	// budget again, counted from the turn's start.
	Budget BudgetSpec `json:"budget"`
}

// EventType implements Payload.
func (*UserTurn) EventType() string { return TypeUserTurn }
