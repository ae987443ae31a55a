package lsp

import (
	"context"
	"encoding/json"
	"fmt"

	"go.lsp.dev/protocol"

	"github.com/ioh-lsp/ioh-lsp/agent"
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
		lens("▶ Run task", cmdRun, map[string]string{"contract": string(p.TextDocument.URI)})
		for _, st := range s.runs.list() {
			if st.contract == nil || st.contract.Path != abs || !resumable(st.outcome) {
				continue
			}
			lens(fmt.Sprintf("↻ Resume %s (%s)", st.id, st.outcome), cmdResume, runRef{st.id})
		}
	}
	for _, st := range s.pendingAt(abs) {
		ref := runRef{st.id}
		lens(fmt.Sprintf("✓ Apply (ioh run %s)", st.id), cmdApprove, ref)
		lens("Show diff", cmdShowDiff, ref)
		lens("✗ Reject", cmdReject, ref)
	}
	return out, nil
}

// resumable reports outcomes a resume can continue: a run waiting for an
// approval (a crashed run shows as running in another process).
func resumable(o agent.Outcome) bool { return o == agent.OutcomeAwaitingApproval }

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
