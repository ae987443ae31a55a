package telemetry

import (
	"github.com/ioh-lsp/ioh-lsp/internal/agent/event"
	"go.opentelemetry.io/otel/attribute"
	oteltrace "go.opentelemetry.io/otel/trace"
)

// The network proxy's names (docs/policy.md#the-network-proxy).
const (
	eventNetConn     = "ioh.net.conn"
	attrNetHost      = "ioh.net.host"
	attrNetPort      = "ioh.net.port"
	attrNetAllowed   = "ioh.net.allowed"
	attrNetRule      = "ioh.net.rule"
	attrNetLayer     = "ioh.net.layer"
	attrNetReason    = "ioh.net.reason"
	attrNetUp        = "ioh.net.bytes_up"
	attrNetDown      = "ioh.net.bytes_down"
	attrNetMillis    = "ioh.net.duration_ms"
	attrNetworkTotal = "ioh.run.network"
)

// netConn records a connection through the run's proxy as an event of
// the step span its commands ran in.
func (s *state) netConn(r *runSpans, ev event.Event, c *event.NetConn) {
	if r.stepSpan == nil {
		return
	}
	r.stepSpan.AddEvent(eventNetConn, oteltrace.WithTimestamp(ev.Time), oteltrace.WithAttributes(
		attribute.String(attrNetHost, s.str(c.Host)), attribute.Int(attrNetPort, c.Port), attribute.Bool(attrNetAllowed, c.Allowed),
		attribute.String(attrNetRule, s.str(c.Rule)), attribute.String(attrNetLayer, s.str(c.Layer)),
		attribute.String(attrNetReason, s.str(c.Reason)), attribute.Int64(attrNetUp, c.BytesUp),
		attribute.Int64(attrNetDown, c.BytesDown), attribute.Int64(attrNetMillis, c.DurationMS)))
}

// netTotal puts the run's network summary on its span.
func (s *state) netTotal(r *runSpans, o *event.Outcome) {
	if o.Network != "" {
		r.span.SetAttributes(attribute.String(attrNetworkTotal, s.str(o.Network)))
	}
}
