package agent

import (
	"context"
	"testing"

	"github.com/ioh-lsp/ioh-lsp/internal/agent/event"
)

func TestWithTraceContext(t *testing.T) {
	const good = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	for _, c := range []struct {
		tp   string
		kept bool
	}{
		{good, true},
		{"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-future", true},
		{"ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", false}, // version ff is invalid
		{"00-00000000000000000000000000000000-00f067aa0ba902b7-01", false},
		{"00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01", false},
		{"00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01", false}, // upper case is not W3C
		{"not a traceparent", false},
		{"", false},
	} {
		f := withTraceContext(WithTraceContext(context.Background(), TraceContext{Traceparent: c.tp, Tracestate: "k=v"}), &event.RunStarted{})
		ok := f.Traceparent != ""
		if ok != c.kept || (ok && f.Traceparent != c.tp) {
			t.Errorf("traceparent %q: fields %+v, want kept=%v", c.tp, f, c.kept)
		}
		if ok && f.Tracestate != "k=v" {
			t.Errorf("traceparent %q: tracestate %v", c.tp, f.Tracestate)
		}
	}
	if f := withTraceContext(context.Background(), &event.RunStarted{}); *f != (event.RunStarted{}) {
		t.Errorf("no trace context: fields %+v", f)
	}
}
