package lsp

import (
	"context"
	"encoding/json"
	"fmt"

	"go.lsp.dev/protocol"

	"github.com/ioh-lsp/ioh-lsp/internal/agent"
	"github.com/ioh-lsp/ioh-lsp/internal/lsp/api"
)

// CodeLens: task files get "Run task" (and "Resume" for a run of that task
// that stopped before finishing); files of a pending proposal get "Apply",
// "Show diff" and "Reject".
func (s *Server) CodeLens(ctx context.Context, p *protocol.CodeLensParams) ([]protocol.CodeLens, error) {
	abs, err := pathOf(p.TextDocument.URI)
	if err != nil {
		return nil, invalidParams("codeLens: %v", err)
	}
	top := protocol.Range{}
	var out []protocol.CodeLens
	lens := func(title, cmd string, arg any) {
		raw, _ := json.Marshal(arg)
		out = append(out, protocol.CodeLens{Range: top, Command: command(title, cmd, raw)})
	}
	if folder, err := s.folderFor(abs); err == nil && isTaskFile(folder, abs) {
		lens("▶ Run task", cmdRun, api.RunArgs{Contract: string(p.TextDocument.URI)})
		seen := map[string]bool{}
		for _, st := range s.runs.list() {
			seen[st.id] = true
			if st.contract == nil || st.contract.Path != abs || !resumable(st.outcome) {
				continue
			}
			lens(fmt.Sprintf("↻ Resume %s (%s)", st.id, st.outcome), cmdResume, api.RunRef{RunID: st.id})
		}
		for _, id := range s.budgetLenses(ctx, folder, abs) {
			lens(fmt.Sprintf("↻ %s (%s)", continueTitle, id), cmdResume, api.RunRef{RunID: id})
		}
		for _, r := range s.storedResumable(ctx, folder, abs) {
			if !seen[r.RunID] {
				lens(fmt.Sprintf("↻ Resume %s (%s)", r.RunID, r.Shown), cmdResume, api.RunRef{RunID: r.RunID})
			}
		}
	}
	for _, st := range s.pendingAt(abs) {
		ref := api.RunRef{RunID: st.id}
		if st.proposal != nil && st.proposal.Report.NeedsHuman() {
			lens("⚠ "+selfTouchLabel, cmdShowDiff, ref)
		}
		lens(fmt.Sprintf("✓ Apply (ioh run %s)", st.id), cmdApprove, ref)
		lens("Show diff", cmdShowDiff, ref)
		lens("✗ Reject", cmdReject, ref)
	}
	return out, nil
}

// resumable reports outcomes a resume can continue: a run waiting for an
// approval, one interrupted (its process was killed, or the trace store
// failed), or one cancelled (it continues from its last committed step).
func resumable(o agent.Outcome) bool {
	return o == agent.OutcomeAwaitingApproval || o == agent.OutcomeInterrupted || o == agent.OutcomeCancelled
}

// storedResumable lists the root runs of the task file abs recorded in
// folder's trace (by earlier sessions or the CLI) that a resume can
// continue: interrupted ones, and ones deferred on an act. A server that
// starts resumes none of them on its own; it offers them here and lists
// them in ioh.runs.
func (s *Server) storedResumable(ctx context.Context, folder, abs string) []*agent.StoredRun {
	eng, err := s.engine(ctx, folder)
	if err != nil || eng.history() == nil {
		return nil
	}
	runs, err := eng.history().Runs(ctx)
	if err != nil {
		s.log.Debug("codeLens: list stored runs", "folder", folder, "err", err)
		return nil
	}
	var out []*agent.StoredRun
	for _, r := range runs {
		// A pending change is answered with Apply/Reject, not resumed.
		if r.Parent == "" && resumable(r.Shown) && r.ContractPath == abs && !r.Offered {
			out = append(out, r)
		}
	}
	return out
}

// refreshLenses asks the client to re-request code lenses.
func (s *Server) refreshLenses() {
	s.mu.Lock()
	can := s.caps.codeLensRefresh
	s.mu.Unlock()
	if !can {
		return
	}
	s.post(func(ctx context.Context) {
		ctx, cancel := context.WithTimeout(ctx, clientCallTimeout)
		defer cancel()
		if err := s.client.CodeLensRefresh(ctx); err != nil {
			s.log.Debug("codeLens/refresh", "err", err)
		}
	})
}
