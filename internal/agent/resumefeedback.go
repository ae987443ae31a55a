package agent

import (
	"context"
	"fmt"
	"strings"

	"github.com/ioh-lsp/ioh-lsp/internal/agent/contract"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/event"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/model"
)

// userFeedback is the user's answer to a rejected change, added to the
// text of the committed user message at index Msg of the transcript (the
// one holding the finish call's result). The state keeps it, so every
// later restore rebuilds the same transcript.
type userFeedback struct {
	Msg  int    `json:"msg"`
	Text string `json:"text"`
}

// RejectWithFeedback rejects the pending change of run id and continues
// the run with feedback as the user's next message: the change set is
// kept for the model to revise, and its next finish is verified and
// offered again. The rejection is recorded (an approval event, answer
// deny, the feedback as its reason). Without a pending change it is an
// ErrNotPending error (and ErrConfig: nothing changes).
func (h *Harness) RejectWithFeedback(ctx context.Context, id, feedback string) (*Run, error) {
	feedback = strings.TrimSpace(feedback)
	if feedback == "" {
		return nil, configError{fmt.Errorf("reject %s: the feedback is empty: say what the agent should do instead, or reject without feedback to end the run", id)}
	}
	row, err := h.opts.Store.Run(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("reject %s: %w", id, err)
	}
	st, err := decodeState(row.State)
	if err != nil {
		return nil, err
	}
	if Outcome(row.Outcome) != OutcomeAwaitingApproval || st.Phase != phaseProposal {
		return nil, configError{fmt.Errorf("reject %s with feedback: the run (outcome %s) has no change awaiting approval: %w", id, row.Outcome, ErrNotPending)}
	}
	return h.resume(ctx, id, contract.Budget{}, &userTurn{take: func(a *agentRun) event.Event { return a.takeFeedback(feedback) }})
}

// takeFeedback turns the run's proposal back into a running loop whose
// next request carries feedback, and returns the event recording the
// rejection.
func (a *agentRun) takeFeedback(feedback string) event.Event {
	a.addUserText(fmt.Sprintf("The user rejected the change you proposed, with this feedback:\n%s\n\n"+
		"Your change set is kept as it is: revise it as the feedback asks, then call finish again.", a.h.redact.String(feedback)))
	a.st.Phase = phaseLoop
	return event.New(a.id, "", 0, &event.Approval{Change: true, Answer: string(Deny), Reason: "feedback: " + feedback, Recorded: true})
}

// addUserText adds text, the user's next message, to the committed user
// message the transcript ends with (the one holding the last tool
// results), and records it in the state, so every later restore rebuilds
// the same transcript (restoreTurns).
func (a *agentRun) addUserText(text string) {
	i := len(a.msgs) - 1
	if i < 0 || a.msgs[i].Role != model.RoleUser {
		// A committed step ends with a user message; a transcript
		// without one gets the text as a message of its own.
		a.msgs = append(a.msgs, model.Message{Role: model.RoleUser})
		i++
	}
	a.st.Feedback = append(a.st.Feedback, userFeedback{Msg: i, Text: text})
	a.msgs[i].Text = joinText(a.msgs[i].Text, text)
}

// replayTurns adds recorded user messages (fb, oldest first) to a
// transcript that holds its first message: their indices count it, as
// addUserText's do (restoreTurns).
func (a *agentRun) replayTurns(fb []userFeedback) {
	for _, f := range fb {
		if f.Msg == len(a.msgs) {
			a.msgs = append(a.msgs, model.Message{Role: model.RoleUser})
		}
		if f.Msg >= 0 && f.Msg < len(a.msgs) {
			a.msgs[f.Msg].Text = joinText(a.msgs[f.Msg].Text, f.Text)
		}
	}
}

func joinText(a, b string) string {
	if a == "" {
		return b
	}
	return a + "\n\n" + b
}
