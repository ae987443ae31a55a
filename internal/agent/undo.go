package agent

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/ioh-lsp/ioh-lsp/internal/agent/event"
	"github.com/ioh-lsp/ioh-lsp/internal/workspace"
)

// ErrNotApplied: the run has no applied change to undo.
var ErrNotApplied = errors.New("run has no applied change")

// ErrUndone: the run's change was undone already.
var ErrUndone = errors.New("the run's change was already undone")

// UndoConflictError: edits made since the change was applied overlap
// it; nothing was written.
type UndoConflictError struct{ Files []workspace.FileConflict }

func (e *UndoConflictError) Error() string {
	parts := make([]string, len(e.Files))
	for i, f := range e.Files {
		parts[i] = f.Describe()
	}
	return "edits made since the change was applied overlap it: " + strings.Join(parts, "; ")
}

// UndoResult says what Undo put back.
type UndoResult struct {
	RunID string
	// Files were put back as they were before the change; Merged are
	// those of them whose later edits were kept.
	Files, Merged []string
}

// undoSnapshot is the change set about to be applied with every base's
// content (the stored snapshot keeps only the hash of a base the
// workspace holds, and Apply overwrites it); nil when it cannot be made.
func (a *agentRun) undoSnapshot() []byte {
	data, err := a.cs.MarshalWithBases(a.h.sealer())
	if err != nil {
		a.h.log.Warn("snapshot the change for undo", "run", a.id, "err", err)
		return nil
	}
	return data
}

// keepUndo stores the snapshot taken before the change was applied, so
// `ioh-lsp undo` can revert it; a failure only costs the undo.
func (a *agentRun) keepUndo(snap []byte) {
	if snap == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := a.h.opts.Store.SetChanges(ctx, a.id, snap); err != nil {
		a.h.log.Warn("store the change for undo", "run", a.id, "err", err)
	}
}

// UndoPoint is what `ioh-lsp undo` needs of a change another party
// applies (the editor, through workspace/applyEdit): the change with every
// base's content, taken before it is applied. Keep it once the change
// landed; nil when it could not be taken (undo then says so).
func (h *Harness) UndoPoint(cs *workspace.ChangeSet) []byte {
	data, err := cs.MarshalWithBases(h.sealer())
	if err != nil {
		h.log.Warn("snapshot the change for undo", "err", err)
		return nil
	}
	return data
}

// KeepUndoPoint stores p as run id's change to undo. A file the editor
// applied only in part is reverted hunk by hunk three-way, so its dropped
// hunks, never applied, stay as the user left them.
func (h *Harness) KeepUndoPoint(ctx context.Context, id string, p []byte) error {
	if p == nil {
		return nil
	}
	return h.opts.Store.SetChanges(ctx, id, p)
}

// Undo reverts the applied change of run id: every file it changed goes
// back to what it was before, edits made since kept where they do not
// overlap the change (workspace.ChangeSet.Revert). Overlapping edits
// refuse the whole undo with an *UndoConflictError naming the files and
// lines; nothing is written then. The undo is recorded as an undo event.
func (h *Harness) Undo(ctx context.Context, id string) (*UndoResult, error) {
	row, err := h.opts.Store.Run(ctx, id)
	if err != nil {
		return nil, err
	}
	if Outcome(row.Outcome) != OutcomeApplied {
		return nil, fmt.Errorf("%s (outcome %s): %w", id, row.Outcome, ErrNotApplied)
	}
	if err := h.opts.Store.Acquire(ctx, id, h.opts.Owner, h.opts.LeaseTTL); err != nil {
		return nil, err
	}
	defer h.opts.Store.Release(context.WithoutCancel(ctx), id, h.opts.Owner)
	if err := h.notUndone(ctx, id); err != nil {
		return nil, err
	}
	cs, err := h.unmarshalChanges(row.Changes)
	if err != nil {
		return nil, fmt.Errorf("restore the change set of %s: %w", id, err)
	}
	rev, merged, conflicts, err := cs.Revert()
	if err != nil {
		return nil, err
	}
	if len(conflicts) > 0 {
		return nil, &UndoConflictError{Files: conflicts}
	}
	files := changedPaths(cs.Changes())
	if err := rev.Apply(); err != nil {
		return nil, fmt.Errorf("undo %s: %w (nothing was written; run undo again)", id, err)
	}
	ev := event.New(id, row.Parent, row.Totals.Steps, &event.Undo{Files: files, Merged: merged})
	if err := h.opts.Store.AppendEvents(context.WithoutCancel(ctx), ev); err != nil {
		return nil, fmt.Errorf("undo %s: the files are reverted, but recording it failed: %w", id, err)
	}
	return &UndoResult{RunID: id, Files: files, Merged: merged}, nil
}

// notUndone refuses a run whose undo is recorded already.
func (h *Harness) notUndone(ctx context.Context, id string) error {
	evs, err := h.opts.Store.Events(ctx, id)
	if err != nil {
		return err
	}
	for _, e := range evs {
		if e.Type == event.TypeUndo {
			return fmt.Errorf("%s: %w at %s", id, ErrUndone, e.Time.Format(time.RFC3339))
		}
	}
	return nil
}
