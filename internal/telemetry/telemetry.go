// Package telemetry exports runs as OpenTelemetry traces over OTLP/HTTP
// (docs/mcp.md#telemetry) when the user config sets
// telemetry.otlp_endpoint. It is a event.Sink: the agent emits its typed events and knows nothing of
// OpenTelemetry. Each run is a span, with its steps, model calls, tool
// calls (with the policy's verdicts) and verification checks as child
// spans, and a sub-agent's run span under its parent's step. Attributes
// carry names, counts and verdicts, never tool arguments, results or
// model text, and every string passes the secrets redactor first. Nothing
// is exported unless an endpoint is configured.
package telemetry

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/ioh-lsp/ioh-lsp/internal/agent/event"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/redact"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	oteltrace "go.opentelemetry.io/otel/trace"
)

// Options configure an Exporter.
type Options struct {
	// Endpoint is the collector's base URL (http://localhost:4318): traces
	// go to its /v1/traces unless the URL names a path of its own.
	Endpoint string
	// Secrets are values no attribute may carry.
	Secrets []string
	// Version is the service version reported.
	Version string
}

// Exporter is a event.Sink that turns a run's events into spans and
// exports them in batches. Safe for concurrent use.
type Exporter struct {
	tp     *sdktrace.TracerProvider
	tracer oteltrace.Tracer
	redact redact.Redactor
	state  *state
}

var _ event.Sink = (*Exporter)(nil)

// TracesURL is where an endpoint's traces are posted.
func TracesURL(endpoint string) (string, error) {
	u, err := url.Parse(strings.TrimSpace(endpoint))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("telemetry: otlp endpoint %q is not an http(s) URL", endpoint)
	}
	if u.Path == "" || u.Path == "/" {
		u.Path = "/v1/traces"
	}
	return u.String(), nil
}

// New returns an exporter to o.Endpoint. Nothing is sent until a run
// emits events. The SDK's batch span processor queues finished spans and
// hands them to httpExporter, which posts them as OTLP protobuf.
func New(ctx context.Context, o Options) (*Exporter, error) {
	target, err := TracesURL(o.Endpoint)
	if err != nil {
		return nil, err
	}
	exp := newHTTPExporter(target)
	version := o.Version
	if version == "" {
		version = "dev"
	}
	res := resource.NewSchemaless(attribute.String("service.name", "ioh-lsp"), attribute.String("service.version", version))
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
	e := &Exporter{tp: tp, tracer: tp.Tracer("github.com/ioh-lsp/ioh-lsp"), redact: redact.New(o.Secrets)}
	e.state = newState(e)
	return e, nil
}

// Emit turns one event into span work.
func (e *Exporter) Emit(ev event.Event) { e.state.emit(ev) }

// Close ends the spans of runs still open (marked interrupted), flushes
// and stops the exporter, waiting at most until ctx ends.
func (e *Exporter) Close(ctx context.Context) error {
	e.state.endAll(time.Now())
	return errors.Join(e.tp.ForceFlush(ctx), e.tp.Shutdown(ctx))
}

// remoteParent is the span context of a caller's W3C traceparent (an ACP
// client's), or ctx unchanged.
func remoteParent(ctx context.Context, traceparent, tracestate string) context.Context {
	if traceparent == "" {
		return ctx
	}
	carrier := propagation.MapCarrier{"traceparent": traceparent}
	if tracestate != "" {
		carrier["tracestate"] = tracestate
	}
	return propagation.TraceContext{}.Extract(ctx, carrier)
}
