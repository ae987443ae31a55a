package trace

// EventReviewOpened is stored when an editor starts showing a run's
// verified change for review (the language server's approver). Until the
// run's proposal or outcome event follows it, the run waits for a person:
// RunRow.Reviewing, shown as awaiting_approval rather than running.
const EventReviewOpened = "review_opened"

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
func (*ReviewOpened) EventType() string { return EventReviewOpened }
