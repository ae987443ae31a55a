package lsp

import (
	"context"
	"fmt"

	"go.lsp.dev/protocol"

	"github.com/ioh-lsp/ioh-lsp/internal/agent"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/event"
)

// A verified change that waits for the user is not running: while the
// editor shows it, ioh.runs and `ioh-lsp runs` say awaiting_approval, the
// progress report says "awaiting review", and a session that ends before
// the user answered leaves the run awaiting_approval (the change can still
// be applied), never cancelled (docs/lsp.md#approval).

// reviewPrefix starts the progress report of a run whose change waits for
// review: clients show it as waiting, not working.
const reviewPrefix = "awaiting review"

// beginReview marks run p.Run as waiting for the user's review: in the
// session (ioh.runs), in its progress, and in the trace (a review_opened
// event, so other processes see it too). The returned func ends the mark.
func (s *Server) beginReview(folder string, p *agent.Proposal, via string) func() {
	s.runs.with(p.Run, func(st *runState) { st.reviewing = true })
	s.recordReview(folder, p, via)
	return func() { s.runs.with(p.Run, func(st *runState) { st.reviewing = false }) }
}

// reviewReport sends the progress report of a change waiting for review.
func (s *Server) reviewReport(id, via string) {
	st, ok := s.runs.lookup(id)
	if !ok || st.token == "" {
		return
	}
	what := "Apply or Discard it in the editor's preview"
	if via == viaHeld {
		what = "Apply, Show diff or Reject"
	}
	msg := fmt.Sprintf("%s: %s · %s", reviewPrefix, what, progressText(st))
	if !s.runs.setLastReport(id, msg) {
		return
	}
	token := st.token
	s.post(func(ctx context.Context) {
		s.sendProgress(ctx, token, &protocol.WorkDoneProgressReport{Kind: "report", Message: &msg})
	})
}

// Ways a change is reviewed, as the review_opened event names them.
const (
	viaAnnotated = "annotated edit"
	viaHeld      = "held proposal"
)

// recordReview stores the review_opened event in the run's trace.
func (s *Server) recordReview(folder string, p *agent.Proposal, via string) {
	var files []string
	if p.Changes != nil {
		for _, c := range p.Changes.Changes() {
			files = append(files, c.Path)
		}
	}
	s.note(s.ctx, folder, p.Run, "record review", &event.ReviewOpened{Files: files, Via: via})
}

// closing reports whether the session is ending (shutdown, or the
// connection closed): what it interrupts was not the user's choice.
func (s *Server) closing() bool {
	s.mu.Lock()
	down := s.shutdown
	s.mu.Unlock()
	return down || (s.ctx != nil && s.ctx.Err() != nil)
}

// keptAtClose turns a review the end of the session interrupted into a
// deferral: the run ends awaiting_approval with its change kept for
// `ioh-lsp approve`, instead of cancelled. A user's own cancel (ioh.cancel)
// still cancels.
func (s *Server) keptAtClose(ctx context.Context, run string, d agent.Decision, err error) (agent.Decision, error) {
	if err == nil || ctx.Err() == nil || !s.closing() {
		return d, err
	}
	return agent.Decision{Answer: agent.Defer, Reason: fmt.Sprintf(
		"the editor closed before the review was answered; the verified change is kept: ioh-lsp diff %s, ioh-lsp approve %s or ioh-lsp reject %s", run, run, run)}, nil
}
