package lsp

import (
	"context"
	"fmt"

	"github.com/ioh-lsp/ioh-lsp/agent"
	"github.com/ioh-lsp/ioh-lsp/agent/contract"
)

// answerAct answers the Ask-tier act a stopped run waits on (a run
// deferred by `ioh-lsp run --approve ask` without a terminal, seen in the
// folder's trace) from ioh.approve / ioh.reject, and continues the run
// with that answer: the editor's yes or no is the answer resume takes,
// without asking again. ok is false when the run does not wait on an act
// (the caller then settles its change).
func (s *Server) answerAct(ctx context.Context, id string, d agent.Decision) (out any, ok bool, err error) {
	eng, err := s.engineOf(ctx, id)
	if err != nil {
		return nil, false, nil // the change path reports it
	}
	waiting, err := eng.Harness.Waiting(ctx, id)
	if err != nil || waiting != "act" {
		return nil, false, nil
	}
	res, err := eng.Harness.AnswerAct(ctx, id, d)
	if err != nil {
		return nil, true, fmt.Errorf("answer %s: %w", id, err)
	}
	s.recordResult(id, res) // the answer's event may have made it look in flight

	if err := s.resumeRun(ctx, id, contract.Budget{}); err != nil {
		return nil, true, fmt.Errorf("answer %s: recorded, but the run did not continue: %w", id, err)
	}
	return map[string]any{"runId": id, "answer": string(d.Answer), "resumed": true}, true, nil
}
