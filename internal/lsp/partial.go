package lsp

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/ioh-lsp/ioh-lsp/internal/agent"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/event"
	"github.com/ioh-lsp/ioh-lsp/internal/workspace"
)

// An editor that lets the user tick hunks (VS Code's Refactor Preview)
// may apply part of the change. A file that reads as the sent text with
// some of the change's hunks applied, exactly, is a partial acceptance,
// not a mismatch: the run is applied, and the trace records each file's
// applied and dropped hunks (a partial_apply event).

// partialOf reports which hunks of the change old → want the text cur
// holds: ok when cur is old with a non-empty proper subset of them.
func partialOf(old, want, cur []byte) (applied, dropped []event.HunkNote, ok bool) {
	wantH, curH := workspace.LineHunks(old, want), workspace.LineHunks(old, cur)
	if len(curH) == 0 || len(curH) >= len(wantH) {
		return nil, nil, false
	}
	wl, cl := workspace.Lines(want), workspace.Lines(cur)
	j := 0
	for _, w := range wantH {
		note := event.HunkNote{Line: w.A0 + 1, Lines: w.A1 - w.A0, New: oneLine(strings.TrimRight(strings.Join(wl[w.B0:w.B1], ""), "\r\n"), 120)}
		if j < len(curH) && sameHunk(w, curH[j], wl, cl) {
			applied = append(applied, note)
			j++
			continue
		}
		dropped = append(dropped, note)
	}
	if j != len(curH) {
		return nil, nil, false // cur has a hunk the change does not
	}
	return applied, dropped, true
}

// sameHunk: the two hunks replace the same old lines with the same text.
func sameHunk(w, c workspace.Hunk, wl, cl []string) bool {
	if w.A0 != c.A0 || w.A1 != c.A1 || w.B1-w.B0 != c.B1-c.B0 {
		return false
	}
	for i := 0; i < w.B1-w.B0; i++ {
		if wl[w.B0+i] != cl[c.B0+i] {
			return false
		}
	}
	return true
}

// partialReason says what the user kept of the change, for the decision.
func partialReason(files []event.PartialFile) string {
	var parts []string
	for _, f := range files {
		parts = append(parts, fmt.Sprintf("%s: %d of %d hunks", f.Path, len(f.Applied), len(f.Applied)+len(f.Dropped)))
	}
	return "applied in part: " + strings.Join(parts, ", ")
}

// recordPartial stores the partial_apply event in the run's trace.
func (s *Server) recordPartial(ctx context.Context, folder, run string, files []event.PartialFile) {
	s.note(ctx, folder, run, "record partial apply", &event.PartialApply{Files: files})
}

// partials splits the files whose text is not the change into those the
// user accepted in part (their edited ranges in files narrowed to the
// applied hunks) and the rest, which are mismatches.
func partials(sent []sentFile, bad []landing, files []editedFile) (rest []landing, out []event.PartialFile) {
	for _, l := range bad {
		i := slices.IndexFunc(sent, func(sf sentFile) bool { return sf.f.path == l.path })
		if i < 0 {
			rest = append(rest, l)
			continue
		}
		applied, dropped, ok := partialOf(sent[i].text, sent[i].f.newText, l.got)
		if !ok {
			rest = append(rest, l)
			continue
		}
		out = append(out, event.PartialFile{Path: l.rel, Applied: applied, Dropped: dropped})
		for k := range files {
			if files[k].path == l.path {
				_, files[k].changed = textEdits(sent[i].text, l.got, "")
			}
		}
	}
	return rest, out
}

// undoPoint snapshots the change about to be sent, with its bases, so
// `ioh-lsp undo` can revert what the editor applies (partial.go's hunks
// included); nil without an engine.
func (s *Server) undoPoint(ctx context.Context, folder string, p *agent.Proposal) []byte {
	eng, err := s.engine(ctx, folder)
	if err != nil || eng.Harness == nil {
		return nil
	}
	return eng.Harness.UndoPoint(p.Changes)
}

// keepUndoPoint stores the snapshot once the edit landed; a failure only
// costs the undo.
func (s *Server) keepUndoPoint(ctx context.Context, folder, run string, point []byte) {
	eng, err := s.engine(ctx, folder)
	if err == nil && eng.Harness != nil {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		err = eng.Harness.KeepUndoPoint(cctx, run, point)
	}
	if err != nil {
		s.log.Warn("store the change for undo", "run", run, "err", err)
	}
}
