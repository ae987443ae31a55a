package agent

import (
	"context"
	"regexp"
	"sync"

	"github.com/ioh-lsp/ioh-lsp/internal/agent/event"
)

// A run can continue a distributed trace its caller belongs to: an ACP
// client's `_meta.traceparent` (W3C Trace Context). The harness records
// it in the run's run_started event, where a telemetry sink reads it and
// makes the run's span a child of the caller's.

type traceContextKey struct{}

// TraceContext is a W3C trace context: traceparent and tracestate.
type TraceContext struct {
	Traceparent string
	Tracestate  string
}

// traceparentRE is the W3C traceparent of version 00 (other versions
// are read by their first four fields, as the standard asks). It compiles
// on first use, not in package init (internal/archtest).
var traceparentRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^[0-9a-f]{2}-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}(-.*)?$`)
})

// WithTraceContext returns ctx carrying tc for the runs started with it
// (Harness.Start). A traceparent that is not well formed, or names the
// all-zero trace or span, is dropped: the run then starts a trace of its
// own.
func WithTraceContext(ctx context.Context, tc TraceContext) context.Context {
	tp := tc.Traceparent
	if !traceparentRE().MatchString(tp) || tp[:2] == "ff" || tp[3:35] == "00000000000000000000000000000000" || tp[36:52] == "0000000000000000" {
		return ctx
	}
	if len(tc.Tracestate) > 512 {
		tc.Tracestate = ""
	}
	return context.WithValue(ctx, traceContextKey{}, tc)
}

// withTraceContext records ctx's trace context in a run_started event.
func withTraceContext(ctx context.Context, p *event.RunStarted) *event.RunStarted {
	if tc, ok := ctx.Value(traceContextKey{}).(TraceContext); ok {
		p.Traceparent, p.Tracestate = tc.Traceparent, tc.Tracestate
	}
	return p
}
