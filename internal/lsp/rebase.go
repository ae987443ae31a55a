package lsp

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"go.lsp.dev/protocol"

	"github.com/ioh-lsp/ioh-lsp/internal/agent"
	"github.com/ioh-lsp/ioh-lsp/internal/lsp/api"
	"github.com/ioh-lsp/ioh-lsp/internal/workspace"
)

// The review as users live it: they keep typing while it waits, and the
// editor's preview may apply nothing. A change whose files were edited
// since the agent read them is rebased onto the new text (three-way per
// hunk: workspace.ChangeSet.Rebase), verified again on the rebased
// overlay, and sent again; only overlapping hunks are a conflict, named
// with both sides. An applyEdit answered applied: false that applied
// nothing keeps the change pending and asks what to do, never rejects it
// silently.

// Titles of the question after a review that applied nothing.
const (
	actReviewAgain = "Review again"
	actApplyAll    = "Apply all"
)

// maxReviewRounds bounds the sends of one proposal (rebases and reviews
// again); past it the change stays pending.
const maxReviewRounds = 6

// review sends the change and follows the editor's answer until it is
// applied, rejected, or left pending.
func (s *Server) review(ctx context.Context, folder string, p *agent.Proposal, annotate bool) (agent.Decision, error) {
	for round := 0; ; round++ {
		var d agent.Decision
		var ok bool
		if p, d, ok = s.rebaseIfNeeded(ctx, p); !ok {
			return d, nil
		}
		before := s.snapshot(folder, p)
		d, final, err := s.sendOnce(ctx, folder, p, annotate)
		if final || err != nil {
			return d, err
		}
		// applied: false.
		if round+1 >= maxReviewRounds {
			s.showMessage(protocol.MessageTypeWarning, fmt.Sprintf("ioh run %s: %s; the change stays pending (ioh.approve, or `ioh-lsp approve %s`)", p.Run, d.Reason, p.Run))
			return agent.Decision{Answer: agent.Defer, Reason: d.Reason + "; kept pending"}, nil
		}
		moved, applied := s.compare(folder, before)
		if c, _ := p.Changes.Conflicts(); len(c) > 0 || moved {
			s.log.Info("the review's files changed while it waited: rebasing", "run", p.Run)
			continue // the user typed: rebase onto the new text and send again
		}
		if applied {
			// Part of the edit landed: the editor's answer is not
			// trustworthy either way; report it as it said.
			return d, nil
		}
		switch s.askUnapplied(ctx, p, d.Reason) {
		case actReviewAgain:
			continue
		case actApplyAll:
			annotate = false // the same edit, nothing left unticked
			continue
		case actReject:
			return agent.Decision{Answer: agent.Deny, Reason: "rejected in the editor"}, nil
		}
		if ctx.Err() != nil {
			return agent.Decision{}, ctx.Err()
		}
		s.showMessage(protocol.MessageTypeInfo, fmt.Sprintf("ioh run %s: the change stays pending (ioh.approve applies it, ioh.reject drops it; or `ioh-lsp approve %s`)", p.Run, p.Run))
		return agent.Decision{Answer: agent.Defer, Reason: d.Reason + "; kept pending"}, nil
	}
}

// askUnapplied tells the user nothing was applied and asks what next: the
// title chosen, "" when dismissed.
func (s *Server) askUnapplied(ctx context.Context, p *agent.Proposal, why string) string {
	item, err := s.client.ShowMessageRequest(ctx, &protocol.ShowMessageRequestParams{
		Type: protocol.MessageTypeWarning,
		Message: fmt.Sprintf("ioh run %s: nothing was applied (%s). In the preview every edit starts unticked; "+
			"the change is still pending: review it again, apply all of it, or reject it.", p.Run, why),
		Actions: []protocol.MessageActionItem{{Title: actReviewAgain}, {Title: actApplyAll}, {Title: actReject}},
	})
	if err != nil || item == nil {
		return ""
	}
	return item.Title
}

// fileState is a changed file's text and open-document version when the
// edit was sent.
type fileState struct {
	text    []byte
	version int32
	open    bool
}

// snapshot records the current state of each file p changes.
func (s *Server) snapshot(folder string, p *agent.Proposal) map[string]fileState {
	out := map[string]fileState{}
	for _, c := range p.Changes.Changes() {
		for _, rel := range []string{c.Path, c.From} {
			if rel == "" {
				continue
			}
			abs := filepath.Join(folder, filepath.FromSlash(rel))
			st := fileState{text: s.fileText(abs)}
			if doc, ok := s.docs.byPath(abs); ok {
				st.version, st.open = doc.version, true
			}
			out[abs] = st
		}
	}
	return out
}

// compare reports whether a document version moved since before (the
// user typed, perhaps back to the same text) and whether any file's text
// changed (something was applied, or typed).
func (s *Server) compare(folder string, before map[string]fileState) (moved, changed bool) {
	for abs, b := range before {
		if doc, ok := s.docs.byPath(abs); ok && (!b.open || doc.version != b.version) {
			moved = true
		}
		if string(s.fileText(abs)) != string(b.text) {
			changed = true
		}
	}
	return moved, changed
}

// rebaseIfNeeded returns p unchanged when its files are as the agent read
// them; else p carried onto their current text and verified again on the
// rebased overlay. ok is false with the decision (a conflict, a failed
// re-verification) when it cannot go on.
func (s *Server) rebaseIfNeeded(ctx context.Context, p *agent.Proposal) (*agent.Proposal, agent.Decision, bool) {
	stale, err := p.Changes.Conflicts()
	if err == nil && len(stale) == 0 {
		return p, agent.Decision{}, true
	}
	if err != nil {
		return s.conflict(p, err.Error())
	}
	ncs, rebased, conflicts, err := p.Changes.Rebase()
	if err != nil {
		return s.conflict(p, err.Error())
	}
	if len(conflicts) > 0 {
		return s.conflict(p, conflictText(conflicts))
	}
	np := *p
	np.Changes = ncs
	if len(rebased) > 0 && p.Report != nil {
		// The checks vouched for the agent's text on the old base; the
		// rebased files are what they will see now.
		eng, err := s.engineOf(ctx, p.Run)
		if err != nil {
			eng, err = s.engine(ctx, ncs.Root().Dir())
		}
		if err != nil {
			return s.conflict(p, "cannot verify the rebased change: "+err.Error())
		}
		rep, err := eng.Harness.Reverify(ctx, p.Run, ncs.Changes())
		if err != nil {
			return s.conflict(p, "cannot verify the rebased change: "+err.Error())
		}
		if rep != nil && !rep.Passed {
			msg := "rebased onto your edits of " + strings.Join(rebased, ", ") + ", the change fails its checks: " + strings.Join(rep.Evidence(), " | ")
			s.showMessage(protocol.MessageTypeError, fmt.Sprintf("ioh run %s: not applied: %s", p.Run, msg))
			return p, agent.Decision{Answer: agent.Deny, Reason: msg}, false
		}
		if rep != nil {
			np.Report = rep
		}
	}
	s.runs.with(p.Run, func(st *runState) { st.proposal = &np })
	s.showMessage(protocol.MessageTypeInfo, fmt.Sprintf("ioh run %s: you edited %s while the review waited; the change was rebased onto your text%s and is sent for review again",
		p.Run, strings.Join(rebased, ", "), verifiedNote(len(rebased) > 0 && p.Report != nil)))
	return &np, agent.Decision{}, true
}

func verifiedNote(reverified bool) string {
	if reverified {
		return " and verified again"
	}
	return ""
}

// conflict reports a change that cannot be carried onto the current text.
func (s *Server) conflict(p *agent.Proposal, why string) (*agent.Proposal, agent.Decision, bool) {
	s.showMessage(protocol.MessageTypeError, fmt.Sprintf("ioh run %s: conflict, not applied: %s", p.Run, why))
	return p, agent.Decision{Answer: agent.Deny, Reason: "conflict: " + why}, false
}

// conflictText names each overlap with both sides: the user's lines (1-
// based, in the current text) and the agent's.
func conflictText(conflicts []workspace.FileConflict) string {
	var parts []string
	for _, c := range conflicts {
		if c.Reason != "" {
			parts = append(parts, c.Path+": "+c.Reason)
			continue
		}
		for _, h := range c.Hunks {
			parts = append(parts, fmt.Sprintf("%s %s: yours %s, the agent's %s", c.Path, lineSpan(h.Ours0, len(h.Ours)), quoteLines(h.Ours), quoteLines(h.Theirs)))
		}
	}
	return "both you and the agent changed " + strings.Join(parts, "; ")
}

func lineSpan(first0, n int) string {
	switch n {
	case 0:
		return fmt.Sprintf("before line %d", first0+1)
	case 1:
		return fmt.Sprintf("line %d", first0+1)
	}
	return fmt.Sprintf("lines %d-%d", first0+1, first0+n)
}

func quoteLines(lines []string) string {
	if len(lines) == 0 {
		return "(deleted)"
	}
	return fmt.Sprintf("%q", oneLine(strings.TrimRight(strings.Join(lines, ""), "\n"), 200))
}

// applyPending applies a change this session proposed and left pending
// (nothing was applied and the question was dismissed, or the review
// gave up) through the editor: the plain edit, rebased first if the user
// typed since, then records what became of it. ok is false when the run
// has no such change here (the harness applies a stored one).
func (s *Server) applyPending(ctx context.Context, id string) (api.Decided, bool, error) {
	st, found := s.runs.lookup(id)
	s.mu.Lock()
	can := s.caps.applyEdit
	s.mu.Unlock()
	if !found || !can || st.proposal == nil || st.held != nil || st.outcome != agent.OutcomeAwaitingApproval || st.folder == "" {
		return api.Decided{}, false, nil
	}
	if _, _, err := s.buildEdit(st.folder, st.proposal.Changes.Changes(), id, st.proposal.Summary, false); err != nil {
		return api.Decided{}, false, nil // the editor cannot carry it (errCannotExpress): the harness writes it
	}
	eng, err := s.engineOf(ctx, id)
	if err != nil {
		return api.Decided{}, false, nil
	}
	d, err := s.review(ctx, st.folder, st.proposal, false)
	if err != nil {
		return api.Decided{}, true, err
	}
	var res *agent.Result
	switch d.Answer {
	case agent.Applied:
		res, err = eng.Harness.RecordApplied(ctx, id)
	case agent.Deny:
		res, err = eng.Harness.Reject(ctx, id, d.Reason)
	default:
		return api.Decided{RunID: id, Outcome: string(agent.OutcomeAwaitingApproval)}, true, nil
	}
	if err != nil {
		return api.Decided{}, true, fmt.Errorf("approve %s: %w", id, err)
	}
	s.recordResult(id, res)
	if res.Outcome == agent.OutcomeRejected {
		s.clearRun(id)
	}
	s.refreshLenses()
	return api.Decided{RunID: id, Outcome: string(res.Outcome)}, true, nil
}
