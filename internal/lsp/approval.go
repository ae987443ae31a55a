package lsp

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"go.lsp.dev/protocol"

	"github.com/ioh-lsp/ioh-lsp/internal/agent"
)

// approver is the editor as the agent's Approver (docs/lsp.md#approval).
//
// A verified change arrives as one workspace/applyEdit whose edits carry
// change annotations with needsConfirmation, when the client advertises
// changeAnnotationSupport: the editor's review is the gate. Other clients
// get the proposal held on the server: a diagnostic on each file, code
// lenses and a window/showMessageRequest (Apply / Show diff / Reject);
// Apply sends the plain edit. A change whose base files changed since the
// agent read them is rebased onto their current text and verified again
// (rebase.go); only overlapping edits are a conflict, never applied. An
// edit the editor says it applied is read back and recorded applied only
// when the files hold the verified change (landed.go).
type approver struct {
	s      *Server
	folder string
}

// Titles of the message actions.
const (
	actAllowOnce = "Allow once"
	actAllowRun  = "Allow for this run"
	actDeny      = "Deny"
	actApply     = "Apply"
	actShowDiff  = "Show diff"
	actReject    = "Reject"
)

// ApproveAct asks about an Ask-tier act with window/showMessageRequest.
func (a approver) ApproveAct(ctx context.Context, req *agent.ActRequest) (agent.Decision, error) {
	s := a.s
	msg := fmt.Sprintf("ioh run %s, step %d: %s wants to %s %q", req.Run, req.Step, req.Tool, req.Verdict.Act, req.Verdict.Target)
	if req.Verdict.Rule != nil {
		msg += fmt.Sprintf(" (rule %s %s %q, layer %s)", req.Verdict.Rule.Effect, req.Verdict.Rule.Act, req.Verdict.Rule.Pattern, req.Verdict.Layer)
	}
	item, err := s.client.ShowMessageRequest(ctx, &protocol.ShowMessageRequestParams{
		Type:    protocol.MessageTypeWarning,
		Message: msg,
		Actions: []protocol.MessageActionItem{{Title: actAllowOnce}, {Title: actAllowRun}, {Title: actDeny}},
	})
	if err != nil {
		if ctx.Err() != nil {
			return agent.Decision{}, ctx.Err()
		}
		return agent.Decision{Answer: agent.Deny, Reason: "the question failed: " + err.Error(), By: byNoAnswer}, nil
	}
	if item == nil {
		return agent.Decision{Answer: agent.Deny, Reason: "the question was closed without an answer", By: byDismissed}, nil
	}
	switch item.Title {
	case actAllowOnce:
		return agent.Decision{Answer: agent.AllowOnce}, nil
	case actAllowRun:
		return agent.Decision{Answer: agent.AllowRun}, nil
	}
	// By stays empty: the user pressed Deny ("denied by the user").
	return agent.Decision{Answer: agent.Deny, Reason: "denied in the editor"}, nil
}

// Who denied an act the user did not answer, as the model reads it
// ("denied by BY: …"): never the user.
const (
	byNoAnswer  = "the editor, which did not answer"
	byDismissed = "a dismissed prompt in the editor"
)

// heldProposal is a proposal waiting for a client without annotation
// support; answer is resolved once, by a message action, a lens, a code
// action or a command.
type heldProposal struct {
	once   sync.Once
	answer chan heldAnswer
}

type heldAnswer struct {
	apply  bool
	reason string
	reply  chan error // the outcome of applying, for the caller that answered
}

func (h *heldProposal) resolve(a heldAnswer) bool {
	ok := false
	h.once.Do(func() { h.answer <- a; ok = true })
	return ok
}

// ApproveChange offers the finished run's change to the editor. While the
// editor has it the run is awaiting review; a session that ends first
// keeps the change pending (reviewstate.go).
func (a approver) ApproveChange(ctx context.Context, p *agent.Proposal) (agent.Decision, error) {
	d, err := a.offer(ctx, p)
	return a.s.keptAtClose(ctx, p.Run, d, err)
}

// offer sends the change for review: an annotated edit, or a proposal held
// on the server for clients without annotations.
func (a approver) offer(ctx context.Context, p *agent.Proposal) (agent.Decision, error) {
	s := a.s
	folder := ""
	s.runs.with(p.Run, func(st *runState) {
		st.proposal = p
		if st.goal == "" {
			st.goal = p.Goal
		}
		if st.folder == "" {
			st.folder = a.folder
		}
		folder = st.folder
	})
	if p.Changes == nil || p.Changes.Len() == 0 {
		return agent.Decision{Answer: agent.Deny, Reason: "the change is empty"}, nil
	}
	if folder == "" {
		folder = p.Changes.Root().Dir()
	}
	p, d, ok := s.rebaseIfNeeded(ctx, p)
	if !ok {
		return d, nil
	}
	s.mu.Lock()
	caps := s.caps
	s.mu.Unlock()
	if !caps.applyEdit {
		s.showMessage(protocol.MessageTypeWarning, fmt.Sprintf("ioh run %s: verified change pending; this editor cannot apply edits (use `ioh-lsp approve %s`)", p.Run, p.Run))
		return agent.Decision{Answer: agent.Defer, Reason: "the editor cannot apply workspace edits"}, nil
	}
	via := viaHeld
	if caps.annotations && caps.documentChanges {
		via = viaAnnotated
	}
	defer s.beginReview(folder, p, via)()
	if via == viaAnnotated {
		return s.review(ctx, folder, p, true)
	}
	return s.hold(ctx, folder, p)
}

// hold keeps the proposal on the server until the user answers.
func (s *Server) hold(ctx context.Context, folder string, p *agent.Proposal) (agent.Decision, error) {
	h := &heldProposal{answer: make(chan heldAnswer, 1)}
	s.runs.with(p.Run, func(st *runState) { st.held = h })
	s.publishHeld(folder, p)
	s.reviewReport(p.Run, viaHeld)
	s.refreshLenses()
	go s.askHeld(ctx, p, h)
	defer func() {
		s.runs.with(p.Run, func(st *runState) { st.held = nil })
		s.setDiags(p.Run, kindHeld, nil)
		s.refreshLenses()
	}()
	var ans heldAnswer
	select {
	case ans = <-h.answer:
	case <-ctx.Done():
		return agent.Decision{}, ctx.Err()
	}
	if !ans.apply {
		reply(ans, nil)
		return agent.Decision{Answer: agent.Deny, Reason: ans.reason}, nil
	}
	p, d, ok := s.rebaseIfNeeded(ctx, p)
	if !ok {
		reply(ans, errors.New(d.Reason))
		return d, nil
	}
	d, err := s.review(ctx, folder, p, false)
	switch {
	case err != nil:
		reply(ans, err)
	case d.Answer != agent.Applied:
		reply(ans, errors.New(d.Reason))
	default:
		reply(ans, nil)
	}
	return d, err
}

func reply(a heldAnswer, err error) {
	if a.reply != nil {
		a.reply <- err
	}
}

// askHeld asks with window/showMessageRequest until the user applies or
// rejects, or the proposal is answered elsewhere (lens, command).
func (s *Server) askHeld(ctx context.Context, p *agent.Proposal, h *heldProposal) {
	for ctx.Err() == nil {
		item, err := s.client.ShowMessageRequest(ctx, &protocol.ShowMessageRequestParams{
			Type:    protocol.MessageTypeInfo,
			Message: heldQuestion(p),
			Actions: []protocol.MessageActionItem{{Title: actApply}, {Title: actShowDiff}, {Title: actReject}},
		})
		if err != nil || item == nil {
			return // dismissed: the lens and commands still answer it
		}
		switch item.Title {
		case actApply:
			h.resolve(heldAnswer{apply: true})
			return
		case actReject:
			h.resolve(heldAnswer{reason: "rejected in the editor"})
			return
		case actShowDiff:
			if _, err := s.showDiff(ctx, p.Run); err != nil {
				s.log.Warn("show diff", "run", p.Run, "err", err)
			}
		default:
			return
		}
	}
}

// heldQuestion is the question about a held proposal: what it changes,
// the evidence, and the mark of a change that touches its own checks.
func heldQuestion(p *agent.Proposal) string {
	msg := fmt.Sprintf("ioh run %s: verified change to %d file(s) ready: %s\nevidence: %s", p.Run, p.Changes.Len(), oneLine(p.Summary, 120), evidenceText(p))
	if mark := selfTouchText(p); mark != "" {
		msg += "\nREVIEW CAREFULLY: " + mark
	}
	return msg
}

// sendOnce sends the change as one workspace/applyEdit. final is false
// when the editor answered applied: false, or its applied result was not
// the change and the user restored their text (the decision then says
// why): review decides what follows.
func (s *Server) sendOnce(ctx context.Context, folder string, p *agent.Proposal, annotate bool) (d agent.Decision, final bool, err error) {
	we, files, err := s.buildEdit(folder, p.Changes.Changes(), p.Run, p.Summary, annotate)
	if err != nil {
		s.showMessage(protocol.MessageTypeWarning, fmt.Sprintf("ioh run %s: %v; the change stays pending (`ioh-lsp approve %s`)", p.Run, err, p.Run))
		return agent.Decision{Answer: agent.Defer, Reason: err.Error()}, true, nil
	}
	annotateReview(&we, folder, p)
	sent := s.sentState(files)
	if annotate {
		s.reviewReport(p.Run, viaAnnotated)
	}
	label := "ioh: " + oneLine(p.Goal, 80)
	point := s.undoPoint(ctx, folder, p)
	res, err := s.client.ApplyEdit(ctx, &protocol.ApplyWorkspaceEditParams{Label: &label, Edit: we})
	if err != nil {
		if ctx.Err() != nil {
			return agent.Decision{}, true, ctx.Err()
		}
		return agent.Decision{Answer: agent.Defer, Reason: "workspace/applyEdit failed: " + err.Error()}, true, nil
	}
	if res == nil || !res.Applied {
		why := "the editor did not apply the change"
		if res != nil && res.FailureReason != nil {
			why += ": " + *res.FailureReason
		}
		return agent.Decision{Answer: agent.Deny, Reason: why}, false, nil
	}
	// applied: true is the editor's word; the text it holds now is the
	// proof (landed.go).
	bad, err := s.checkLanded(ctx, p, sent)
	if err != nil {
		return agent.Decision{}, true, err
	}
	bad, partial := partials(sent, bad, files)
	if len(bad) > 0 {
		return s.mismatch(ctx, folder, p, bad)
	}
	s.publishEdits(p.Run, files)
	s.keepUndoPoint(ctx, folder, p.Run, point)
	if len(partial) > 0 {
		s.recordPartial(ctx, folder, p.Run, partial)
		return agent.Decision{Answer: agent.Applied, Reason: partialReason(partial)}, true, nil
	}
	return agent.Decision{Answer: agent.Applied}, true, nil
}

// answerHeld answers a held proposal (from ioh.approve / ioh.reject) and
// waits for the apply to finish. ok is false when the run has none.
func (s *Server) answerHeld(ctx context.Context, run string, apply bool, reason string) (bool, error) {
	st, found := s.runs.lookup(run)
	if !found || st.held == nil {
		return false, nil
	}
	done := make(chan error, 1)
	if !st.held.resolve(heldAnswer{apply: apply, reason: reason, reply: done}) {
		return true, fmt.Errorf("run %s: the proposal was already answered", run)
	}
	select {
	case err := <-done:
		return true, err
	case <-ctx.Done():
		return true, ctx.Err()
	}
}

func (s *Server) showMessage(typ protocol.MessageType, msg string) {
	s.post(func(ctx context.Context) {
		_ = s.client.ShowMessage(ctx, &protocol.ShowMessageParams{Type: typ, Message: msg})
	})
}
