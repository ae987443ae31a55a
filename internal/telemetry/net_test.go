package telemetry

import (
	"context"
	"testing"

	"github.com/ioh-lsp/ioh-lsp/internal/agent/event"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/redact"
	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

// A net_conn event is an event of its step's span with the connection's
// fields; the outcome's network summary is an attribute of the run span.
func TestNetConnSpanEvent(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	e := &Exporter{tp: tp, tracer: tp.Tracer("test"), redact: redact.New([]string{"s3cr3t-value"})}
	e.state = newState(e)
	e.Emit(event.New("r-1", "", 0, &event.RunStarted{Goal: "g"}))
	e.Emit(event.New("r-1", "", 1, &event.NetConn{Host: "proxy.golang.org", Port: 443, Allowed: true, Rule: "proxy.golang.org:443", Layer: "user", BytesUp: 10, BytesDown: 2000, DurationMS: 5}))
	e.Emit(event.New("r-1", "", 1, &event.NetConn{Host: "s3cr3t-value.example", Port: 443, Layer: "default", Reason: "no rule allows it"}))
	e.Emit(event.New("r-1", "", 1, &event.Outcome{Outcome: "verified", Network: "network: 1 connection allowed through the proxy (10 B up, 2.0 KiB down), 1 refused: x"}))
	if err := tp.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	var step, run sdktrace.ReadOnlySpan
	for _, s := range rec.Ended() {
		switch s.Name() {
		case "step 1":
			step = s
		case spanRun:
			run = s
		}
	}
	if step == nil || run == nil {
		t.Fatalf("spans %v", rec.Ended())
	}
	evs := step.Events()
	if len(evs) != 2 || evs[0].Name != eventNetConn {
		t.Fatalf("step events %+v", evs)
	}
	got := map[attribute.Key]attribute.Value{}
	for _, kv := range evs[0].Attributes {
		got[kv.Key] = kv.Value
	}
	if got[attrNetHost].AsString() != "proxy.golang.org" || got[attrNetPort].AsInt64() != 443 || !got[attrNetAllowed].AsBool() ||
		got[attrNetDown].AsInt64() != 2000 || got[attrNetLayer].AsString() != "user" {
		t.Errorf("allowed connection's attributes %v", got)
	}
	for _, kv := range evs[1].Attributes {
		if kv.Key == attrNetHost && kv.Value.AsString() != "[REDACTED].example" {
			t.Errorf("a secret reached an attribute: %v", kv.Value.AsString())
		}
	}
	var total string
	for _, kv := range run.Attributes() {
		if kv.Key == attrNetworkTotal {
			total = kv.Value.AsString()
		}
	}
	if total == "" {
		t.Errorf("the run span has no network summary: %v", run.Attributes())
	}
}
