package main

import (
	"github.com/ioh-lsp/ioh-lsp/internal/agent/event"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/render"
)

// The model's text as it streams in (docs/cli.md#progress): each
// text_delta is printed at once behind its step's prefix, so the turn
// reads as it is written; its model_turn then prints no headline, and a
// retry after some of it says that text is discarded.

// discardedNote ends the retry line of an attempt whose text was printed.
const discardedNote = "; the text it streamed above is discarded"

// turnText remembers, per run, the step whose text is being streamed.
type turnText struct {
	out      *statusWriter // nil: text is not streamed (the headline says it)
	streamed map[string]int
}

// line handles e for the progress lines and returns the line to print
// for it ("" for none): a text_delta is written at once, the model_turn
// of a streamed turn ends its line, and a retry of one is marked.
func (t *turnText) line(e event.Event) string {
	if t.out == nil {
		return render.Headline(e)
	}
	step, streaming := t.streamed[e.Run]
	streaming = streaming && step == e.Step
	switch p := e.Payload.(type) {
	case *event.TextDelta:
		if t.streamed == nil {
			t.streamed = map[string]int{}
		}
		t.streamed[e.Run] = e.Step
		t.out.streamText(e.Run, render.StepPrefix(e), p.Text)
		return ""
	case *event.ModelTurn:
		if streaming {
			delete(t.streamed, e.Run)
			t.out.endTurnText(e.Run)
			return ""
		}
	case *event.Retry:
		if line := render.Headline(e); streaming && line != "" {
			delete(t.streamed, e.Run)
			return line + discardedNote
		}
	}
	return render.Headline(e)
}
