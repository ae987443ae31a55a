package lsp

import (
	"bytes"
	"strings"

	"go.lsp.dev/protocol"

	"github.com/ioh-lsp/ioh-lsp/internal/agent"
)

// Trace diagnostics describe text: an edited range, a failing check's
// line, the task-file line a refused start names, an ignored setting's
// line. When the user changes that text the diagnostic no longer says
// anything true and goes; an edit above it moves it with its line. A
// newer run of the same task replaces the diagnostics of the runs before
// it (docs/lsp.md#diagnostics).

// textKinds are the kinds whose diagnostics sit on text, not on a file.
var textKinds = []string{kindEdit, kindCheck, kindRefused, kindIgnored}

// textChanged updates the text diagnostics of path after a didChange:
// each incremental change drops the diagnostics whose lines it touches
// and moves those below it; a whole-document change drops those whose
// lines now read differently (before is the text the change replaced).
func (s *Server) textChanged(path string, before, after []byte, changes []protocol.TextDocumentContentChangeEvent) {
	d := s.diags
	d.mu.Lock()
	changed := false
	for _, kinds := range d.byRun {
		for _, k := range textKinds {
			es := kinds[k]
			kept := es[:0]
			for _, e := range es {
				if e.path == path && !followEdits(&e.diag.Range, before, after, changes) {
					changed = true
					continue
				}
				if e.path == path {
					changed = true // it may have moved
				}
				kept = append(kept, e)
			}
			kinds[k] = kept
		}
	}
	d.mu.Unlock()
	if changed {
		s.publish(map[string]bool{path: true})
	}
}

// followEdits moves r through the changes in order; false when a change
// touches r's lines, or a whole-document change rewrote them.
func followEdits(r *protocol.Range, before, after []byte, changes []protocol.TextDocumentContentChangeEvent) bool {
	for _, c := range changes {
		switch c := c.(type) {
		case *protocol.TextDocumentContentChangeWholeDocument:
			if linesOf(before, *r) != linesOf(after, *r) {
				return false
			}
		case *protocol.TextDocumentContentChangePartial:
			if !shiftPast(r, c.Range, c.Text) {
				return false
			}
		}
	}
	return true
}

// shiftPast applies one edit of span to r: an edit wholly above r's
// first line (an insertion at its very start included) moves r by the
// lines it adds or removes, one below its last line leaves it, and one
// that touches its lines is false.
func shiftPast(r *protocol.Range, span protocol.Range, text string) bool {
	first, last := r.Start.Line, r.End.Line
	if r.End.Character == 0 && last > first {
		last-- // a range ending at column 0 covers the lines before it
	}
	// A line inserted before r's first line leaves that line as it was.
	insertAtStart := span.Start == span.End && span.Start.Line == first && span.Start.Character == 0 && strings.HasSuffix(text, "\n")
	switch {
	case span.Start.Line > last:
		return true
	case span.End.Line < first || insertAtStart:
		delta := int64(strings.Count(text, "\n")) - int64(span.End.Line-span.Start.Line)
		r.Start.Line = uint32(int64(r.Start.Line) + delta)
		r.End.Line = uint32(int64(r.End.Line) + delta)
		return true
	}
	return false
}

// linesOf is the text of the whole lines r covers ("" past the end).
func linesOf(text []byte, r protocol.Range) string {
	starts := lineStarts(text)
	first, last := int(r.Start.Line), int(r.End.Line)
	if first >= len(starts) {
		return ""
	}
	end := len(text)
	if last+1 < len(starts) {
		end = starts[last+1]
	}
	return string(bytes.TrimRight(text[starts[first]:end], "\r\n"))
}

// sameTask reports whether two runs are of one task: the same task file,
// or, for runs without one (ask), the same goal.
func sameTask(a, b runState) bool {
	if a.contract == nil || b.contract == nil {
		return false
	}
	if a.contract.Path != "" || b.contract.Path != "" {
		return a.contract.Path == b.contract.Path
	}
	return a.contract.Goal == b.contract.Goal
}

// replaceEarlier clears the diagnostics of the session's earlier runs of
// run id's task, except a change still waiting for the user (its held
// proposal's diagnostics are how the user finds it).
func (s *Server) replaceEarlier(id string) {
	cur, ok := s.runs.lookup(id)
	if !ok {
		return
	}
	for _, st := range s.runs.list() {
		if st.id == id || !sameTask(st, cur) || st.held != nil || st.reviewing || st.outcome == agent.OutcomeAwaitingApproval {
			continue
		}
		s.clearRun(st.id)
	}
}
