package lsp

import (
	"context"
	"fmt"

	"github.com/ioh-lsp/ioh-lsp/internal/agent"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/contract"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/policy"
	"github.com/ioh-lsp/ioh-lsp/internal/lsp/api"
)

// answerAct answers the Ask-tier act a stopped run waits on (a run
// deferred by `ioh-lsp run --approve ask` without a terminal, seen in the
// folder's trace) from ioh.approve / ioh.reject, and continues the run
// with that answer: the editor's yes or no is the answer resume takes,
// without asking again. ok is false when the run does not wait on an act
// (the caller then settles its change).
func (s *Server) answerAct(ctx context.Context, id string, d agent.Decision) (out api.Decided, ok bool, err error) {
	eng, err := s.engineOf(ctx, id)
	if err != nil {
		return api.Decided{}, false, nil // the change path reports it
	}
	waiting, err := eng.Harness.Waiting(ctx, id)
	if err != nil || waiting != "act" {
		return api.Decided{}, false, nil
	}
	res, err := eng.Harness.AnswerAct(ctx, id, d)
	if err != nil {
		return api.Decided{}, true, fmt.Errorf("answer %s: %w", id, err)
	}
	s.recordResult(id, res) // the answer's event may have made it look in flight

	if err := s.resumeRun(ctx, id, contract.Budget{}); err != nil {
		return api.Decided{}, true, fmt.Errorf("answer %s: recorded, but the run did not continue: %w", id, err)
	}
	return api.Decided{RunID: id, Answer: string(d.Answer), Resumed: true}, true, nil
}

// allowOnce re-runs the task of run id, whose act the policy denied, on
// the folder's engine with that one act allowed once (the "Allow once"
// quick fix): the same harness and trace store, no second engine. The
// grant lifts a deny or ask of the user, editor, workspace, task or
// remembered layer for exactly that act and target, never the built-in
// layer (docs/policy.md#allow-once): onPolicy offers the quick fix only
// where it can succeed.
func (s *Server) allowOnce(ctx context.Context, id, act, target string) (string, error) {
	st, ok := s.runs.lookup(id)
	if !ok || st.contract == nil {
		return "", invalidParams("%s: run %q has no task to re-run in this session", cmdAllowOnce, id)
	}
	eng, err := s.engine(ctx, st.folder)
	if err != nil {
		return "", err
	}
	runCtx, cancel := context.WithCancel(s.ctx)
	run, err := eng.Harness.StartAllowingOnce(runCtx, st.contract, agent.Grant{Act: policy.Act(act), Target: target})
	if err != nil {
		cancel()
		return "", fmt.Errorf("start run: %w", err)
	}
	s.setDiags(id, kindPolicy, nil)
	s.track(run, st.folder, eng, st.contract, cancel)
	return run.ID(), nil
}
