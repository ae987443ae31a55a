package agent

// Outcome is how a run ended (SPEC §4); OutcomeRunning while in flight.
type Outcome string

const (
	OutcomeVerified           Outcome = "verified"
	OutcomeApplied            Outcome = "applied"
	OutcomeRejected           Outcome = "rejected"
	OutcomeVerificationFailed Outcome = "verification_failed"
	OutcomeUnverified         Outcome = "unverified"
	OutcomeBudgetExceeded     Outcome = "budget_exceeded"
	OutcomeStalled            Outcome = "stalled"
	OutcomeDenied             Outcome = "denied"
	OutcomeAwaitingApproval   Outcome = "awaiting_approval"
	OutcomeProviderFailed     Outcome = "provider_failed"
	OutcomeCancelled          Outcome = "cancelled"
	OutcomeRunning            Outcome = "running"
)

// ExitCode maps an outcome to the exit code of `ioh-lsp run` (SPEC §2).
// A verified change left pending (approve never) exits 0 like an applied one.
func (o Outcome) ExitCode() int {
	switch o {
	case OutcomeApplied, OutcomeVerified, OutcomeUnverified:
		return 0
	case OutcomeVerificationFailed, OutcomeRejected, OutcomeStalled, OutcomeDenied:
		return 1
	case OutcomeBudgetExceeded:
		return 3
	case OutcomeAwaitingApproval:
		return 4
	case OutcomeProviderFailed:
		return 5
	case OutcomeCancelled:
		return 130
	}
	return 1
}
