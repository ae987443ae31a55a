package lsp

import (
	"fmt"
	"path/filepath"
	"strings"

	"go.lsp.dev/protocol"
	"go.lsp.dev/uri"

	"github.com/ioh-lsp/ioh-lsp/internal/agent"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/review"
)

// The review carries the verification evidence and, for a change that
// touches its own checks (test files, what a check runs or how,
// package-init code), a mark: its files get an annotation group of their
// own that needs confirmation and says why, and the held proposal's
// diagnostics and question say it too.

// selfTouchLabel is the title of a change that touches its own checks.
var selfTouchLabel = review.TouchesChecks.Label

// evidenceText is the proposal's evidence in one line: each check's final
// run ("unit: passed (go test -json, 2 tests ran); failed before, pass
// now: TestMean (…)"), or that it is unverified.
func evidenceText(p *agent.Proposal) string {
	if p.Report == nil {
		return "unverified: the contract has no checks"
	}
	return strings.Join(p.Report.Evidence(), " | ")
}

// selfTouchText is the mark in one line, "" when the change leaves its
// checks alone.
func selfTouchText(p *agent.Proposal) string {
	if !p.Report.NeedsHuman() {
		return ""
	}
	return "it touches its own checks, so it waits for your review: " + strings.Join(p.Report.TouchesChecks, "; ")
}

// annotateReview adds the evidence to every annotation's description and
// moves the edits of the files that touch the checks (the report's
// TouchesChecksFiles) into the review.TouchesChecks group.
// we must have been built with annotations (see buildEdit).
func annotateReview(we *protocol.WorkspaceEdit, folder string, p *agent.Proposal) {
	if we.ChangeAnnotations == nil {
		return
	}
	ev := "evidence: " + evidenceText(p)
	for id, a := range we.ChangeAnnotations {
		desc := ev
		if a.Description != nil {
			desc = *a.Description + " — " + ev
		}
		a.Description = &desc
		we.ChangeAnnotations[id] = a
	}
	if !p.Report.NeedsHuman() {
		return
	}
	marked := map[string]bool{}
	for _, rel := range p.Report.TouchesChecksFiles {
		marked[filepath.Clean(filepath.Join(folder, filepath.FromSlash(rel)))] = true
	}
	isMarked := func(u uri.URI) bool {
		abs, err := pathOf(u)
		return err == nil && marked[filepath.Clean(abs)]
	}
	self := annotationID(review.TouchesChecks)
	moved := false
	for _, dc := range we.DocumentChanges {
		switch d := dc.(type) {
		case *protocol.TextDocumentEdit:
			if !isMarked(d.TextDocument.URI) {
				continue
			}
			for _, e := range d.Edits {
				if ae, ok := e.(*protocol.AnnotatedTextEdit); ok {
					ae.AnnotationID, moved = self, true
				}
			}
		case *protocol.CreateFile:
			if isMarked(d.URI) {
				d.AnnotationID, moved = self, true
			}
		case *protocol.DeleteFile:
			if isMarked(d.URI) {
				d.AnnotationID, moved = self, true
			}
		case *protocol.RenameFile:
			if isMarked(d.OldURI) || isMarked(d.NewURI) {
				d.AnnotationID, moved = self, true
			}
		}
	}
	if !moved {
		return
	}
	dropUnused(we)
	yes := true
	desc := fmt.Sprintf("run %s: %s — %s", p.Run, selfTouchText(p), ev)
	we.ChangeAnnotations[self] = protocol.ChangeAnnotation{Label: selfTouchLabel, NeedsConfirmation: &yes, Description: &desc}
}

// dropUnused removes annotation groups no edit refers to any more.
func dropUnused(we *protocol.WorkspaceEdit) {
	used := map[protocol.ChangeAnnotationIdentifier]bool{}
	for _, dc := range we.DocumentChanges {
		switch d := dc.(type) {
		case *protocol.TextDocumentEdit:
			for _, e := range d.Edits {
				if ae, ok := e.(*protocol.AnnotatedTextEdit); ok {
					used[ae.AnnotationID] = true
				}
			}
		case *protocol.CreateFile:
			used[d.AnnotationID] = true
		case *protocol.DeleteFile:
			used[d.AnnotationID] = true
		case *protocol.RenameFile:
			used[d.AnnotationID] = true
		}
	}
	for id := range we.ChangeAnnotations {
		if !used[id] {
			delete(we.ChangeAnnotations, id)
		}
	}
}
