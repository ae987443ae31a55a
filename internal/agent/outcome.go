package agent

import (
	"errors"

	"github.com/ioh-lsp/ioh-lsp/internal/agent/event"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/trace"
)

// Outcome is how a run ended (docs/contract.md#outcomes); OutcomeRunning while in flight.
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
	// OutcomeInterrupted: the run stopped between steps without ending —
	// its process was killed, or the trace store failed (disk full, I/O
	// error). It is never stored: the trace keeps the run as running from
	// its last committed step, shows it as interrupted once no live
	// process holds its lease, and resume continues it.
	OutcomeInterrupted Outcome = trace.OutcomeInterrupted
)

// BudgetError is why a run ended budget_exceeded: the limit that stopped
// it and the text that says what was spent and how to go on. Front ends
// read the limit from it (Result.StopLimit), not from the text.
type BudgetError struct {
	Limit Limit
	Err   error
}

func (e *BudgetError) Error() string { return e.Err.Error() }
func (e *BudgetError) Unwrap() error { return e.Err }

// budgetStop ends a run on limit l, err saying how.
func budgetStop(l Limit, err error) *end {
	return &end{OutcomeBudgetExceeded, &BudgetError{Limit: l, Err: err}}
}

// StopLimit says which limit stopped a run that ended budget_exceeded
// (LimitSteps, LimitTokens, LimitCost, LimitWall), "" for any other
// outcome or when nothing names one. A live run's error is a
// *BudgetError; so is a stored run's (storedErr), with the limit its
// state recorded. Only a Result built by hand with a plain error falls
// back to the limit its text names (ExceededLimit).
func (r *Result) StopLimit() Limit {
	if r == nil || r.Outcome != OutcomeBudgetExceeded || r.Err == nil {
		return ""
	}
	if l := limitOf(r.Err); l != "" {
		return l
	}
	return ExceededLimit(r.Err.Error())
}

// storedErr is the error of a run read back from the store: for a budget
// stop a *BudgetError with the limit its state recorded (a run stored
// before the limit was gets the one its text names, ExceededLimit), else
// the text as an error; nil for none.
func storedErr(outcome Outcome, text string, st *runState) error {
	if text == "" {
		return nil
	}
	err := errors.New(text)
	if outcome != OutcomeBudgetExceeded {
		return err
	}
	l := ExceededLimit(text)
	if st != nil && st.StopLimit != "" {
		l = st.StopLimit
	}
	return &BudgetError{Limit: l, Err: err}
}

// OutcomeLimit is the limit that stopped the run an outcome event ends:
// the event's Limit, or for an event stored before it had one, the limit
// its error names (ExceededLimit); "" unless it ended budget_exceeded.
func OutcomeLimit(p *event.Outcome) Limit {
	if p == nil || Outcome(p.Outcome) != OutcomeBudgetExceeded {
		return ""
	}
	if p.Limit != "" {
		return Limit(p.Limit)
	}
	return ExceededLimit(p.Error)
}

// limitOf is the limit of a BudgetError in err's chain, "" without one.
func limitOf(err error) Limit {
	var be *BudgetError
	if errors.As(err, &be) {
		return be.Limit
	}
	return ""
}

// resumable reports whether Resume continues a run that ended with o: one
// still running (its process died), one awaiting approval (of an act: the
// answer comes from the approver or approve/reject; of its change: it is
// offered again), a cancelled one and one whose provider failed (both
// from their last committed step: the failed call was never committed),
// and, with a raised budget, one its budget stopped.
func (o Outcome) resumable(raising bool) bool {
	switch o {
	case OutcomeRunning, OutcomeAwaitingApproval, OutcomeCancelled, OutcomeProviderFailed:
		return true
	case OutcomeBudgetExceeded:
		return raising
	}
	return false
}

// ExitCode maps an outcome to the exit code of `ioh-lsp run`
// (docs/cli.md#exit-codes-of-run-and-resume).
// A verified change left pending (approve never) exits 0 like an applied one.
// An interrupted run (the trace store failed) exits 6: neither the
// provider's failure (5) nor a finished run's; `resume` continues it.
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
	case OutcomeInterrupted:
		return 6
	}
	return 1
}
