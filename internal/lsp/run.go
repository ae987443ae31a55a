package lsp

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/ioh-lsp/ioh-lsp/internal/agent"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/contract"
)

// startRun starts c in folder in the background and returns its id at
// once. The run lives under the connection's context, not the request's.
func (s *Server) startRun(ctx context.Context, folder string, c *contract.Contract) (string, error) {
	eng, err := s.engine(ctx, folder)
	if err != nil {
		return "", err
	}
	runCtx, cancel := context.WithCancel(s.ctx)
	run, err := eng.Harness.Start(runCtx, c)
	if err != nil {
		cancel()
		if strings.HasPrefix(err.Error(), "start run: ") {
			return "", err // the harness said so already
		}
		return "", fmt.Errorf("start run: %w", err)
	}
	s.track(run, folder, eng, c, cancel)
	s.replaceEarlier(run.ID())
	return run.ID(), nil
}

// resumeRun continues run id from its last committed step, with its
// budget raised to raise's non-zero limits.
func (s *Server) resumeRun(ctx context.Context, id string, raise contract.Budget) error {
	folder := ""
	var c *contract.Contract
	if st, ok := s.runs.lookup(id); ok {
		if st.outcome == agent.OutcomeRunning {
			return fmt.Errorf("run %s is still running", id)
		}
		folder, c = st.folder, st.contract
	}
	if folder == "" {
		fs := s.folderPaths()
		if len(fs) == 0 {
			return fmt.Errorf("resume %s: no workspace folder is open", id)
		}
		folder = fs[0]
	}
	eng, err := s.engine(ctx, folder)
	if err != nil {
		return err
	}
	runCtx, cancel := context.WithCancel(s.ctx)
	run, err := eng.Harness.ResumeWith(runCtx, id, raise)
	if err != nil {
		cancel()
		if errors.Is(err, agent.ErrConfig) {
			return invalidParams("%s: %v", cmdResume, err)
		}
		return fmt.Errorf("resume %s: %w", id, err)
	}
	s.setDiags(id, kindBudget, nil)
	s.track(run, folder, eng, c, cancel)
	return nil
}

// track registers a started run, opens its progress and waits for its end
// on a goroutine that ends with the run (whose context ends with the
// connection).
func (s *Server) track(run *agent.Run, folder string, eng *Engine, c *contract.Contract, cancel context.CancelFunc) {
	id := run.ID()
	s.runs.with(id, func(st *runState) {
		st.folder, st.eng, st.cancel = folder, eng, cancel
		if c != nil {
			st.contract, st.goal = c, c.Goal
		}
		// Events (and even a held proposal) may already have arrived from
		// the run's goroutine: keep them. finishRun only runs after this.
		st.outcome = agent.OutcomeRunning
		st.result = nil
		select {
		case <-st.done:
			st.done = make(chan struct{}) // a resumed run
		default:
		}
	})
	s.progressBegin(id)
	release := s.eng.hold(eng) // a retired engine closes after its last run
	s.runs.wg.Add(1)
	go func() {
		defer s.runs.wg.Done()
		defer release()
		defer cancel()
		res := run.Wait()
		s.finishRun(id, res)
	}()
}

// finishRun records the result and reports it: progress end, diagnostics
// of failed checks, lenses.
func (s *Server) finishRun(id string, res *agent.Result) {
	var done chan struct{}
	s.runs.with(id, func(st *runState) {
		st.result = res
		if res != nil {
			st.outcome = res.Outcome
			st.steps = res.Steps
			// The events' running totals include sub-agents; the result
			// is the root's own.
			st.tokens = max(st.tokens, res.Usage.Total())
			st.cost = max(st.cost, res.CostUSD)
			st.unpriced = st.unpriced || res.Unpriced > 0
			if !res.Started.IsZero() {
				st.started = res.Started
			}
		}
		st.held = nil
		done = st.done
	})
	switch {
	case res != nil && res.Outcome == agent.OutcomeRejected:
		s.clearRun(id) // the change was dropped: so is its trace
	case res != nil && res.Report != nil:
		s.publishReport(id, res.Report)
	}
	s.publishBudgetStop(id, res)
	s.progressEnd(id, res)
	s.refreshLenses()
	if done != nil {
		close(done)
	}
}

// cancelRun cancels a run in flight.
func (s *Server) cancelRun(id string) bool {
	st, ok := s.runs.lookup(id)
	if !ok {
		return false
	}
	hit := false
	if st.eng != nil {
		hit = st.eng.Harness.Cancel(id)
	}
	if st.cancel != nil && st.outcome == agent.OutcomeRunning {
		st.cancel()
		hit = true
	}
	return hit
}

// drainOutbox waits until everything queued for the client so far (log
// messages, notifications) has been sent, or ctx ends.
func (s *Server) drainOutbox(ctx context.Context) {
	done := make(chan struct{})
	s.post(func(context.Context) { close(done) })
	select {
	case <-done:
	case <-ctx.Done():
	case <-s.ctx.Done():
	}
}
