package lsp

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"time"

	"go.lsp.dev/protocol"
	"go.lsp.dev/uri"

	"github.com/ioh-lsp/ioh-lsp/internal/agent"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/event"
	"github.com/ioh-lsp/ioh-lsp/internal/workspace"
)

// An editor's applied: true does not prove the verified change landed.
// VS Code checks a versioned edit's version when the edit arrives (the
// preview opens), not when Apply is pressed: a line the user typed in
// between shifts the text, and the stale hunks land at their old lines.
// So after every applied edit the server reads back each file it touched
// (the open document once the editor's didChange has arrived, else the
// disk) and compares it with the text the change intended. A result that
// is neither that text nor that text merged onto the user's typing is a
// mismatch: never recorded applied; the user is told and offered their
// text back with the change reviewed again (rebased onto it).

// Titles of the question after a mismatch.
const (
	actRestoreReview = "Restore my text and review again"
	actKeepAsIs      = "Keep as is"
)

// EventApplyMismatch is the trace event of an applied edit whose result
// is not the verified change.
const EventApplyMismatch = event.TypeApplyMismatch

// landWait bounds the wait for the editor's didChange of an applied
// edit; landQuiet is how long a document must stay unchanged after its
// version moved before its text is judged.
const (
	landWait  = 2 * time.Second
	landQuiet = 250 * time.Millisecond
)

// sentFile is a file of a sent edit as the server held it when sending.
type sentFile struct {
	f       editedFile
	open    bool
	version int32
	text    []byte
}

// sentState records the files of an edit about to be sent.
func (s *Server) sentState(files []editedFile) []sentFile {
	out := make([]sentFile, 0, len(files))
	for _, f := range files {
		sf := sentFile{f: f, text: s.fileText(f.path)}
		if doc, ok := s.docs.byPath(f.path); ok {
			sf.open, sf.version = true, doc.version
		}
		out = append(out, sf)
	}
	return out
}

// landing is a file whose text after the applied edit is not the change.
type landing struct {
	path, rel string
	got       []byte
	ours      []byte // the user's text just before the edit landed; nil when unknown
	version   int32  // the open document's version now (0: not open)
	open      bool
}

// checkLanded returns the files of an applied edit whose text is not what
// the change intended (nor that change merged onto the user's typing).
func (s *Server) checkLanded(ctx context.Context, p *agent.Proposal, sent []sentFile) ([]landing, error) {
	deadline := time.NewTimer(landWait)
	defer deadline.Stop()
	renamed := map[string]bool{}
	for _, c := range p.Changes.Changes() {
		if c.From != "" {
			renamed[c.Path] = true
		}
	}
	var bad []landing
	for _, sf := range sent {
		if sf.f.empty || sf.f.op == workspace.OpDelete || renamed[sf.f.rel] {
			continue // nothing to read back (a rename's text may sit in an unsaved buffer)
		}
		l, ok, err := s.landedFile(ctx, p, sf, deadline.C)
		if err != nil {
			return nil, err
		}
		if !ok {
			bad = append(bad, l)
		}
	}
	return bad, nil
}

// landedFile waits until sf's text is the change's, or has settled (the
// editor's didChange arrived and nothing changed for landQuiet), or the
// shared deadline passed, and judges it.
func (s *Server) landedFile(ctx context.Context, p *agent.Proposal, sf sentFile, deadline <-chan time.Time) (landing, bool, error) {
	want := sf.f.newText
	for {
		ch := s.docs.changes()
		doc, isOpen := s.docs.byPath(sf.f.path)
		cur := s.fileText(sf.f.path)
		if bytes.Equal(cur, want) {
			return landing{}, true, nil
		}
		settled := !sf.open || !isOpen || doc.version > sf.version
		var quiet <-chan time.Time
		var t *time.Timer
		if settled {
			t = time.NewTimer(landQuiet)
			quiet = t.C
		}
		stop := func() {
			if t != nil {
				t.Stop()
			}
		}
		select {
		case <-ch:
			stop()
			continue
		case <-quiet:
		case <-deadline:
			stop()
		case <-ctx.Done():
			stop()
			return landing{}, false, ctx.Err()
		}
		return s.judge(p, sf, want)
	}
}

// judge decides about a settled file whose text is not the change's.
func (s *Server) judge(p *agent.Proposal, sf sentFile, want []byte) (landing, bool, error) {
	doc, isOpen := s.docs.byPath(sf.f.path)
	cur := s.fileText(sf.f.path)
	l := landing{path: sf.f.path, rel: sf.f.rel, got: cur, open: isOpen}
	if isOpen {
		l.version = doc.version
	}
	if bytes.Equal(cur, want) {
		return l, true, nil
	}
	if !isOpen || (sf.open && doc.version <= sf.version) || (!sf.open && doc.prev == nil) {
		// Nothing arrived from the editor: a file it keeps in an unsaved
		// buffer still reads as sent; anything else is not the change.
		if bytes.Equal(cur, sf.text) {
			return l, true, nil
		}
		return l, false, nil
	}
	if bytes.Equal(doc.prev, want) {
		return l, true, nil // the change landed, and the user typed on
	}
	l.ours = doc.prev
	base, _ := p.Changes.Base(sf.f.rel)
	if merged, conflicts := workspace.Merge3(base, l.ours, want); len(conflicts) == 0 && bytes.Equal(merged, cur) {
		return l, true, nil // the change landed exactly onto the user's typing
	}
	return l, false, nil
}

// mismatch tells the user the edit landed on changed text, records it,
// and asks: restore their text and review again (final is false: review
// sends the change again, rebased onto that text), or keep the result
// (the run stays awaiting approval, never applied).
func (s *Server) mismatch(ctx context.Context, folder string, p *agent.Proposal, bad []landing) (agent.Decision, bool, error) {
	var names []string
	restorable := true
	for _, l := range bad {
		names = append(names, l.rel)
		if l.ours == nil || !l.open {
			restorable = false
		}
	}
	what := fmt.Sprintf("the edit landed on a changed file: %s changed while the review waited and the editor applied the change at its old lines; the result is NOT the verified change", strings.Join(names, ", "))
	s.log.Warn("apply mismatch", "run", p.Run, "files", names)
	actions := []protocol.MessageActionItem{{Title: actRestoreReview}, {Title: actKeepAsIs}}
	msg := fmt.Sprintf("ioh run %s: %s. Restore your text (as it was before the edit) and review the change again, rebased onto it, or keep the file as it is now?", p.Run, what)
	if !restorable {
		actions = actions[1:]
		msg = fmt.Sprintf("ioh run %s: %s, and your text before it is not known here: check the file; the change stays pending.", p.Run, what)
	}
	item, err := s.client.ShowMessageRequest(ctx, &protocol.ShowMessageRequestParams{Type: protocol.MessageTypeError, Message: msg, Actions: actions})
	answer := actKeepAsIs
	if err == nil && item != nil && item.Title == actRestoreReview && restorable {
		answer = actRestoreReview
	}
	if ctx.Err() != nil {
		return agent.Decision{}, true, ctx.Err()
	}
	var restoreErr error
	if answer == actRestoreReview {
		restoreErr = s.restore(ctx, p, bad)
	}
	s.recordMismatch(ctx, folder, p.Run, names, answer, restoreErr)
	reason := "apply_mismatch: " + what
	if answer == actRestoreReview && restoreErr == nil {
		return agent.Decision{Answer: agent.Deny, Reason: reason + "; your text restored, reviewed again"}, false, nil
	}
	if restoreErr != nil {
		s.showMessage(protocol.MessageTypeError, fmt.Sprintf("ioh run %s: could not restore your text: %v; the change stays pending", p.Run, restoreErr))
	}
	return agent.Decision{Answer: agent.Defer, Reason: reason + "; kept as is, the change stays pending"}, true, nil
}

// restore puts back the user's text of each file with one plain,
// versioned edit.
func (s *Server) restore(ctx context.Context, p *agent.Proposal, bad []landing) error {
	var we protocol.WorkspaceEdit
	for _, l := range bad {
		tes, _ := textEdits(l.got, l.ours, "")
		if len(tes) == 0 {
			continue
		}
		we.DocumentChanges = append(we.DocumentChanges, &protocol.TextDocumentEdit{
			TextDocument: protocol.OptionalVersionedTextDocumentIdentifier{TextDocumentIdentifier: protocol.TextDocumentIdentifier{URI: uri.File(l.path)}, Version: ptr(l.version)},
			Edits:        tes,
		})
	}
	if len(we.DocumentChanges) == 0 {
		return nil
	}
	label := "ioh: restore your text (run " + p.Run + ")"
	res, err := s.client.ApplyEdit(ctx, &protocol.ApplyWorkspaceEditParams{Label: &label, Edit: we})
	if err != nil {
		return fmt.Errorf("workspace/applyEdit: %w", err)
	}
	if res == nil || !res.Applied {
		why := "the editor did not apply it"
		if res != nil && res.FailureReason != nil {
			why += ": " + *res.FailureReason
		}
		return fmt.Errorf("restore: %s", why)
	}
	return nil
}

// recordMismatch stores the apply_mismatch event in the run's trace.
func (s *Server) recordMismatch(ctx context.Context, folder, run string, files []string, answer string, restoreErr error) {
	p := &event.ApplyMismatch{Files: files, Answer: answer}
	if restoreErr != nil {
		p.RestoreError = restoreErr.Error()
	}
	s.note(ctx, folder, run, "record apply mismatch", p)
}
