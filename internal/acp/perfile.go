package acp

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

// A change of more than one file may be decided file by file: the
// change's request offers "Choose files…", then each file gets a
// request of its own. The rejected files are dropped from the change set
// before the harness writes it, so only the accepted ones are written,
// snapshotted for /undo and reverted by it; a partial_apply event lists
// what was applied and what was dropped.

// optChoose answers the change's request with "decide per file".
const optChoose = "choose_files"

// chooseOption is the per-file route. ACP's option kinds are only
// allow/reject once/always: it allows once, the files it asks about next.
var chooseOption = permissionOption{OptionID: optChoose, Name: "Choose files…", Kind: "allow_once"}

// fileOptions answer one file of a change decided per file.
var fileOptions = []permissionOption{
	{OptionID: optAllowOnce, Name: "Apply this file", Kind: "allow_once"},
	{OptionID: optRejectOnce, Name: "Leave it as it is", Kind: "reject_once"},
}

// changeOptionsFor are the answers to the change: per file too when it
// has more than one file and no rename (a rename's two paths are one
// file: it cannot be split).
func changeOptionsFor(cs *workspace.ChangeSet) []permissionOption {
	changes := cs.Changes()
	if len(changes) < 2 || slices.ContainsFunc(changes, func(ch workspace.Change) bool { return ch.From != "" }) {
		return changeOptions
	}
	return []permissionOption{changeOptions[0], chooseOption, changeOptions[1]}
}

// chooseFiles asks about each file of the change and answers the change:
// all accepted is the whole change, none is a reject, and a part drops
// the others from the change set and records partial_apply.
func (a approver) chooseFiles(ctx context.Context, p *agent.Proposal, changeID string) (agent.Decision, error) {
	changes := p.Changes.Changes()
	var kept, dropped []workspace.Change
	for i, ch := range changes {
		id := fmt.Sprintf("%s/change-file-%d", p.Run, i+1)
		tc := toolCall{SessionUpdate: "tool_call", ToolCallID: id, Kind: kindEdit, Status: statusPending,
			Title:     fmt.Sprintf("Apply %s? (file %d of %d)", ch.Path, i+1, len(changes)),
			Content:   []toolCallContent{a.diff(p.Changes, ch)},
			Locations: a.ss.tr.locations([]string{ch.Path}),
			Meta:      map[string]any{"ioh": map[string]any{"run": p.Run, "file": ch.Path}},
		}
		a.ss.update(tc)
		choice, err := a.ask(ctx, tc, fileOptions)
		if err != nil {
			return agent.Decision{}, err
		}
		status, note := statusCompleted, "Accepted: written with the change."
		if choice == optAllowOnce {
			kept = append(kept, ch)
		} else {
			dropped = append(dropped, ch)
			status, note = statusFailed, "Dropped: this file stays as it is."
		}
		a.ss.update(toolCall{SessionUpdate: "tool_call_update", ToolCallID: id, Status: status, Content: []toolCallContent{textContent(note)}})
	}
	if len(kept) == 0 {
		a.ss.update(toolCall{SessionUpdate: "tool_call_update", ToolCallID: changeID, Status: statusFailed,
			Content: []toolCallContent{textContent("Discarded: every file was left as it is; nothing was written.")}})
		return agent.Decision{Answer: agent.Deny, Reason: "rejected in the editor, file by file"}, nil
	}
	a.ss.tr.expectOutcome(p.Run)
	if len(dropped) == 0 {
		return agent.Decision{Answer: agent.AllowOnce}, nil
	}
	files := partialFiles(p.Changes, kept, dropped)
	for _, ch := range dropped {
		if err := dropFile(p.Changes, ch); err != nil {
			return agent.Decision{}, err
		}
	}
	if conf, err := p.Changes.Conflicts(); err == nil && len(conf) == 0 {
		a.recordPartial(p.Run, files) // else the apply refuses the change: nothing to record
	}
	return agent.Decision{Answer: agent.AllowOnce, Reason: "applied in part: " + pathsOf(kept) + " applied; " + pathsOf(dropped) + " dropped"}, nil
}

// dropFile takes one file out of the change set: its pending state goes
// back to the base, so Apply leaves it alone.
func dropFile(cs *workspace.ChangeSet, ch workspace.Change) error {
	var err error
	if base, ok := cs.Base(ch.Path); ok {
		err = cs.WriteFile(ch.Path, base)
	} else {
		err = cs.Delete(ch.Path) // created by the change
	}
	if err == nil && slices.ContainsFunc(cs.Changes(), func(c workspace.Change) bool { return c.Path == ch.Path }) {
		err = fmt.Errorf("%s is still changed after putting its base back", ch.Path)
	}
	if err != nil {
		return fmt.Errorf("drop %s from the change: %w; nothing was written", ch.Path, err)
	}
	return nil
}

// partialFiles are the partial_apply notes: each file's hunks, applied
// or dropped whole (taken before the dropped files leave the change).
func partialFiles(cs *workspace.ChangeSet, kept, dropped []workspace.Change) []event.PartialFile {
	var out []event.PartialFile
	for _, ch := range kept {
		out = append(out, event.PartialFile{Path: ch.Path, Applied: hunkNotes(cs, ch), Dropped: []event.HunkNote{}})
	}
	for _, ch := range dropped {
		out = append(out, event.PartialFile{Path: ch.Path, Applied: []event.HunkNote{}, Dropped: hunkNotes(cs, ch)})
	}
	return out
}

// hunkNotes are the change's hunks of one file, as the trace names them.
func hunkNotes(cs *workspace.ChangeSet, ch workspace.Change) []event.HunkNote {
	old, _ := cs.Base(ch.Path)
	lines := workspace.Lines(ch.Content)
	notes := []event.HunkNote{}
	for _, h := range workspace.LineHunks(old, ch.Content) {
		text := strings.TrimRight(strings.Join(lines[h.B0:h.B1], ""), "\r\n")
		if i := strings.IndexByte(text, '\n'); i >= 0 {
			text = text[:i] + " …"
		}
		if len(text) > 120 {
			text = text[:120] + "…"
		}
		notes = append(notes, event.HunkNote{Line: h.A0 + 1, Lines: h.A1 - h.A0, New: text})
	}
	return notes
}

// recordPartial stores the partial_apply event in the run's trace; a
// failure costs only the record.
func (a approver) recordPartial(run string, files []event.PartialFile) {
	eng := a.ss.eng
	if eng == nil || eng.Harness == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := eng.Harness.History().Note(ctx, run, &event.PartialApply{Files: files}); err != nil {
		a.ss.srv.log.Warn("record partial apply", "run", run, "err", err)
	}
}

func pathsOf(changes []workspace.Change) string {
	paths := make([]string, len(changes))
	for i, ch := range changes {
		paths[i] = ch.Path
	}
	return strings.Join(paths, ", ")
}
