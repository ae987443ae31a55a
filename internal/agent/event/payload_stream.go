package event

// TypeTextDelta is a piece of the model's text as it arrives, before the
// turn's model_turn event holds the whole text. It is transient: emitted
// to the live sinks (the CLI, `run --json`, ACP) and never stored, so a
// stored run's trace has none (docs/trace-json.md).
const TypeTextDelta = "text_delta"

// TextDelta: the model streamed a piece of its text. The pieces of one
// step and attempt add up to the step's model_turn text; a retry
// (a retry event after them) discards the pieces of the attempt before.
type TextDelta struct {
	Text string `json:"text"`
	// Attempt counts the provider calls of this step: 1, then one more
	// for each retry.
	Attempt int `json:"attempt"`
}

// EventType implements Payload.
func (*TextDelta) EventType() string { return TypeTextDelta }

// Transient reports an event type that is emitted live and never stored.
func Transient(typ string) bool { return typ == TypeTextDelta || typ == TypeCheckStarted }

// TypeCheckStarted is a check run starting (its verification event
// follows when it ends): transient like text_delta, so a live status
// can name the check that runs now.
const TypeCheckStarted = "check_started"

// CheckStarted: a check run started.
type CheckStarted struct {
	Check string `json:"check"`
	Phase string `json:"phase"` // red before the change, green after
}

// EventType implements Payload.
func (*CheckStarted) EventType() string { return TypeCheckStarted }
