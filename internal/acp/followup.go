package acp

import (
	"context"
	"errors"
	"strings"

	"github.com/ioh-lsp/ioh-lsp/internal/agent"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/contract"
)

// A text prompt in a session that has a run is the user's next turn in
// that run's conversation (agent.Harness.Continue): the model sees the
// earlier turns and the change so far, and the follow-up's edits add to
// a change that was not applied or rejected. A prompt that links a task
// file starts a new run of that contract; a new session starts fresh.

// lastRun is the session's latest run ("" before its first).
func (ss *session) lastRun() string {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if n := len(ss.rec.Runs); n > 0 {
		return ss.rec.Runs[n-1]
	}
	return ""
}

// takeModelChange reports (once) that the model was chosen anew since
// the session's last run started.
func (ss *session) takeModelChange() bool {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	changed := ss.modelChanged
	ss.modelChanged = false
	return changed
}

// followUp sends the prompt c was read from to run id as the user's next
// turn and waits for the run (id itself, or a new run linked to it).
func (ss *session) followUp(ctx context.Context, id string, c *contract.Contract) (promptResult, error) {
	text := c.Goal
	if len(c.Context) > 0 {
		text += "\n\nFiles the user linked: " + strings.Join(c.Context, ", ")
	}
	ss.update(ss.tr.startPlan(ss.turnPlan(ctx, id, text)))
	run, err := ss.eng.Harness.Continue(ctx, id, text)
	if err != nil {
		if ss.wasCancelled() {
			return promptResult{StopReason: stopCancelled}, nil
		}
		if errors.Is(err, agent.ErrConfig) || errors.Is(err, agent.ErrBusy) {
			return ss.refuse(err, "")
		}
		ss.refuse(err, "")
		return promptResult{}, err
	}
	ss.recordRun(run.ID(), text) // a linked run: run_started recorded it
	return ss.finishTurn(ctx, run.Wait())
}

// turnPlan is the plan of a follow-up: the run's stored contract (its
// checks) with the follow-up as its goal.
func (ss *session) turnPlan(ctx context.Context, id, text string) *contract.Contract {
	c := &contract.Contract{}
	if row, err := ss.eng.Harness.History().Run(ctx, id); err == nil && row.Contract != nil {
		*c = *row.Contract
	}
	c.Goal = text
	return c
}
