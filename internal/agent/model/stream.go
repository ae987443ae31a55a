package model

import "context"

// textDeltaKey carries a run's text-delta callback on a call's context.
type textDeltaKey struct{}

// WithTextDelta returns ctx carrying fn, which a provider calls with each
// piece of the model's text as it arrives, before Complete returns the
// whole turn. The pieces of one successful call add up to its
// Response.Text; a call that fails (and is retried) may have delivered
// some of its text already, which the caller must then treat as
// discarded. fn is called from the goroutine that called Complete.
func WithTextDelta(ctx context.Context, fn func(text string)) context.Context {
	return context.WithValue(ctx, textDeltaKey{}, fn)
}

// TextDeltaFunc returns the callback WithTextDelta put on ctx; nil when
// there is none.
func TextDeltaFunc(ctx context.Context) func(text string) {
	fn, _ := ctx.Value(textDeltaKey{}).(func(string))
	return fn
}

// EmitTextDelta hands text to ctx's text-delta callback; an empty text
// or a context without a callback does nothing.
func EmitTextDelta(ctx context.Context, text string) {
	if text == "" {
		return
	}
	if fn := TextDeltaFunc(ctx); fn != nil {
		fn(text)
	}
}
