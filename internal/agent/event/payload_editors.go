package event

// TypeReviewOpened is stored when an editor starts showing a run's
// verified change for review (the language server's approver). Until the
// run's proposal or outcome event follows it, the run waits for a person:
// RunRow.Reviewing, shown as awaiting_approval rather than running.
const TypeReviewOpened = "review_opened"

// ReviewOpened: the change went to the editor for review.
type ReviewOpened struct {
	// Files are the workspace-relative paths of the change.
	Files []string `json:"files"`
	// Via is how the editor reviews it: "annotated edit" (the editor's
	// own preview, such as VS Code's Refactor Preview) or "held proposal"
	// (the server keeps it; Apply / Show diff / Reject).
	Via string `json:"via"`
}

// EventType implements Payload.
func (*ReviewOpened) EventType() string { return TypeReviewOpened }

// TypePartialApply is stored when the editor applied only some hunks of
// a verified change (the user unticked others in VS Code's Refactor
// Preview): what was applied and what was dropped, per file.
const TypePartialApply = "partial_apply"

// PartialApply: the user accepted part of the change.
type PartialApply struct {
	Files []PartialFile `json:"files"`
}

// PartialFile is one file's applied and dropped hunks.
type PartialFile struct {
	Path    string     `json:"path"`
	Applied []HunkNote `json:"applied"`
	Dropped []HunkNote `json:"dropped"`
}

// HunkNote names a hunk by the lines it replaces in the file as it was
// (1-based Line, Lines of them; 0 lines for an insertion before Line) and
// a preview of its new text.
type HunkNote struct {
	Line  int    `json:"line"`
	Lines int    `json:"lines"`
	New   string `json:"new"`
}

// EventType implements Payload.
func (*PartialApply) EventType() string { return TypePartialApply }

// Undo: `ioh-lsp undo` reverted the run's applied change. Files lists
// every file put back as it was before the change; Merged those of them
// whose later edits were kept around the revert.
type Undo struct {
	Files  []string `json:"files"`
	Merged []string `json:"merged,omitempty"`
}

// EventType implements Payload.
func (*Undo) EventType() string { return TypeUndo }
