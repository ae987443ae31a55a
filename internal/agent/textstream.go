package agent

import (
	"context"
	"sync"

	"github.com/ioh-lsp/ioh-lsp/internal/agent/event"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/model"
)

// textStream turns the text a model call streams into transient
// text_delta events (never stored: the step's model_turn holds the whole
// text). Each piece is redacted before it leaves, and the end of one that
// may begin a secret is held back until the next piece shows whether it
// does, so a secret split across two pieces is still caught.
type textStream struct {
	a       *agentRun
	mu      sync.Mutex
	held    string
	attempt int
}

// streamText returns ctx carrying the callback that streams one model
// call's text, its pieces numbered from attempt on, and the stream
// (a.stream while the call runs, so a retry reported meanwhile starts a
// new attempt).
func (a *agentRun) streamText(ctx context.Context, attempt int) (context.Context, *textStream) {
	s := &textStream{a: a, attempt: attempt}
	a.retryMu.Lock()
	a.stream = s
	a.retryMu.Unlock()
	return model.WithTextDelta(ctx, s.delta), s
}

// delta takes one piece of the model's text.
func (s *textStream) delta(text string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	red := s.a.h.redact
	out := red.String(s.held + text)
	keep := red.Held(out)
	s.held = out[len(out)-keep:]
	s.send(out[:len(out)-keep])
}

// send emits text as a text_delta of the current attempt; s.mu is held.
func (s *textStream) send(text string) {
	if text != "" {
		s.a.emit(s.a.event(&event.TextDelta{Text: text, Attempt: s.attempt}))
	}
}

// retry starts the next attempt: what the failed one held back is dropped
// with the rest of its text.
func (s *textStream) retry() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.held = ""
	s.attempt++
}

// end sends what was held back (the call answered: its text is whole)
// and detaches the stream from its run.
func (s *textStream) end(ok bool) {
	s.mu.Lock()
	if ok {
		s.send(s.held)
	}
	s.held = ""
	s.mu.Unlock()
	s.a.retryMu.Lock()
	if s.a.stream == s {
		s.a.stream = nil
	}
	s.a.retryMu.Unlock()
}

// checkStarted emits a transient check_started event: a live status
// names the check that runs now (its verification event follows).
func (a *agentRun) checkStarted(name, phase string) {
	a.emit(a.event(&event.CheckStarted{Check: name, Phase: phase}))
}
