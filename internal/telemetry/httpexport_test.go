package telemetry

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	oteltrace "go.opentelemetry.io/otel/trace"
	coltrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
)

const secretValue = "attr-value-never-in-errors-5c1d"

func testCtx(t *testing.T) context.Context {
	t.Helper()
	t.Setenv("HOME", t.TempDir())
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	t.Setenv("IOH_STATE_DIR", t.TempDir())
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func ids(t, s byte) oteltrace.SpanContextConfig {
	var c oteltrace.SpanContextConfig
	for i := range c.TraceID {
		c.TraceID[i] = t
	}
	for i := range c.SpanID {
		c.SpanID[i] = s
	}
	return c
}

// sampleSpans are two spans of one resource and scope (a child of a
// remote parent, with every attribute type, an event, a link and an
// error status) and one of another resource.
func sampleSpans(t *testing.T) []sdktrace.ReadOnlySpan {
	t.Helper()
	res := resource.NewSchemaless(attribute.String("service.name", "ioh-lsp"))
	other := resource.NewSchemaless(attribute.String("service.name", "other"))
	scope := instrumentation.Scope{Name: "github.com/ioh-lsp/ioh-lsp", Version: "v1"}
	start := time.Unix(1700000000, 123)
	parentCfg := ids(0xaa, 0x11)
	parentCfg.TraceFlags = oteltrace.FlagsSampled
	parentCfg.Remote = true
	parent := oteltrace.NewSpanContext(parentCfg)
	childCfg := ids(0xaa, 0x22)
	childCfg.TraceFlags = oteltrace.FlagsSampled
	ts, err := oteltrace.ParseTraceState("vendor=x")
	if err != nil {
		t.Fatal(err)
	}
	childCfg.TraceState = ts
	linkCfg := ids(0xbb, 0x33)
	linkCfg.Remote = true
	stubs := tracetest.SpanStubs{
		{
			Name: "execute_tool write_file", SpanContext: oteltrace.NewSpanContext(childCfg), Parent: parent,
			SpanKind: oteltrace.SpanKindClient, StartTime: start, EndTime: start.Add(time.Second),
			Attributes: []attribute.KeyValue{
				attribute.String("s", secretValue), attribute.Int64("i", -7), attribute.Float64("f", 1.5), attribute.Bool("b", true),
				attribute.StringSlice("ss", []string{"x", "y"}), attribute.Int64Slice("is", []int64{1, 2}),
				attribute.Float64Slice("fs", []float64{0.5}), attribute.BoolSlice("bs", []bool{false, true}),
			},
			Events:            []sdktrace.Event{{Name: "denied", Time: start.Add(time.Millisecond), Attributes: []attribute.KeyValue{attribute.String("rule", "r")}, DroppedAttributeCount: 2}},
			Links:             []sdktrace.Link{{SpanContext: oteltrace.NewSpanContext(linkCfg), Attributes: []attribute.KeyValue{attribute.Int("n", 3)}}},
			Status:            sdktrace.Status{Code: codes.Error, Description: "denied"},
			DroppedAttributes: 4, DroppedEvents: 5, DroppedLinks: 6,
			Resource: res, InstrumentationScope: scope,
		},
		{
			Name: "step 1", SpanContext: oteltrace.NewSpanContext(ids(0xaa, 0x44)), SpanKind: oteltrace.SpanKindInternal,
			StartTime: start, EndTime: start.Add(2 * time.Second), Status: sdktrace.Status{Code: codes.Ok},
			Resource: res, InstrumentationScope: scope,
		},
		{
			Name: "other", SpanContext: oteltrace.NewSpanContext(ids(0xcc, 0x55)), StartTime: start, EndTime: start,
			Resource: other, InstrumentationScope: scope,
		},
	}
	return stubs.Snapshots()
}

// TestExportRequestIsOTLP decodes the hand-framed request with the
// collector's own message type and checks every converted field.
func TestExportRequestIsOTLP(t *testing.T) {
	b := exportRequest(sampleSpans(t))
	var req coltrace.ExportTraceServiceRequest
	if err := proto.Unmarshal(b, &req); err != nil {
		t.Fatalf("not an ExportTraceServiceRequest: %v", err)
	}
	if len(req.ResourceSpans) != 2 {
		t.Fatalf("%d resource spans, want 2 (one per resource)", len(req.ResourceSpans))
	}
	rs := req.ResourceSpans[0]
	if a := rs.Resource.GetAttributes(); len(a) != 1 || a[0].Key != "service.name" || a[0].Value.GetStringValue() != "ioh-lsp" {
		t.Errorf("resource attributes %v", a)
	}
	if len(rs.ScopeSpans) != 1 || rs.ScopeSpans[0].Scope.GetName() != "github.com/ioh-lsp/ioh-lsp" || rs.ScopeSpans[0].Scope.GetVersion() != "v1" || len(rs.ScopeSpans[0].Spans) != 2 {
		t.Fatalf("scope spans %v", rs.ScopeSpans)
	}
	s := rs.ScopeSpans[0].Spans[0]
	if s.Name != "execute_tool write_file" || !bytes.Equal(s.TraceId, bytes.Repeat([]byte{0xaa}, 16)) ||
		!bytes.Equal(s.SpanId, bytes.Repeat([]byte{0x22}, 8)) || !bytes.Equal(s.ParentSpanId, bytes.Repeat([]byte{0x11}, 8)) {
		t.Errorf("ids: %x %x parent %x", s.TraceId, s.SpanId, s.ParentSpanId)
	}
	if s.TraceState != "vendor=x" || s.Kind != tracepb.Span_SPAN_KIND_CLIENT {
		t.Errorf("trace state %q kind %v", s.TraceState, s.Kind)
	}
	if s.StartTimeUnixNano != 1700000000000000123 || s.EndTimeUnixNano != 1700000001000000123 {
		t.Errorf("times %d %d", s.StartTimeUnixNano, s.EndTimeUnixNano)
	}
	if s.Flags != 0x301 { // sampled, the parent is known remote, and it is remote
		t.Errorf("flags %#x, want 0x301", s.Flags)
	}
	if s.Status.GetCode() != tracepb.Status_STATUS_CODE_ERROR || s.Status.GetMessage() != "denied" {
		t.Errorf("status %v", s.Status)
	}
	if s.DroppedAttributesCount != 4 || s.DroppedEventsCount != 5 || s.DroppedLinksCount != 6 {
		t.Errorf("dropped %d %d %d", s.DroppedAttributesCount, s.DroppedEventsCount, s.DroppedLinksCount)
	}
	got := map[string]string{}
	for _, kv := range s.Attributes {
		got[kv.Key] = kv.Value.String()
	}
	want := map[string]string{}
	for k, v := range map[string]string{
		"s": `string_value:"` + secretValue + `"`, "i": "int_value:-7", "f": "double_value:1.5", "b": "bool_value:true",
		"ss": `array_value:{values:{string_value:"x"} values:{string_value:"y"}}`, "is": "array_value:{values:{int_value:1} values:{int_value:2}}",
		"fs": "array_value:{values:{double_value:0.5}}", "bs": "array_value:{values:{bool_value:false} values:{bool_value:true}}",
	} {
		want[k] = v
	}
	for k, v := range want {
		// The text format's spacing is not stable; compare without blanks.
		if strings.ReplaceAll(got[k], " ", "") != strings.ReplaceAll(v, " ", "") {
			t.Errorf("attribute %s = %s, want %s", k, got[k], v)
		}
	}
	if len(s.Events) != 1 || s.Events[0].Name != "denied" || s.Events[0].TimeUnixNano != 1700000000001000123 ||
		s.Events[0].DroppedAttributesCount != 2 || s.Events[0].Attributes[0].Value.GetStringValue() != "r" {
		t.Errorf("events %v", s.Events)
	}
	if len(s.Links) != 1 || !bytes.Equal(s.Links[0].SpanId, bytes.Repeat([]byte{0x33}, 8)) || s.Links[0].Flags != 0x300 ||
		s.Links[0].Attributes[0].Value.GetIntValue() != 3 {
		t.Errorf("links %v", s.Links)
	}
	step := rs.ScopeSpans[0].Spans[1]
	if step.ParentSpanId != nil || step.Flags != 0x100 || step.Status.GetCode() != tracepb.Status_STATUS_CODE_OK || step.Kind != tracepb.Span_SPAN_KIND_INTERNAL {
		t.Errorf("root step span: parent %x flags %#x status %v kind %v", step.ParentSpanId, step.Flags, step.Status, step.Kind)
	}
	if o := req.ResourceSpans[1]; o.Resource.GetAttributes()[0].Value.GetStringValue() != "other" || o.ScopeSpans[0].Spans[0].Name != "other" ||
		o.ScopeSpans[0].Spans[0].Status.GetCode() != tracepb.Status_STATUS_CODE_UNSET {
		t.Errorf("second resource: %v", o)
	}
}

// collector answers each request with the next scripted reply (the
// last one repeats) and keeps what it got.
type collector struct {
	mu      sync.Mutex
	replies []func(w http.ResponseWriter)
	bodies  [][]byte
	types   []string
	paths   []string
}

func (c *collector) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	c.mu.Lock()
	c.bodies = append(c.bodies, b)
	c.types = append(c.types, r.Header.Get("Content-Type"))
	c.paths = append(c.paths, r.URL.Path)
	reply := c.replies[min(len(c.bodies), len(c.replies))-1]
	c.mu.Unlock()
	reply(w)
}

func (c *collector) requests() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.bodies)
}

func status(code int, retryAfter string) func(w http.ResponseWriter) {
	return func(w http.ResponseWriter) {
		if retryAfter != "" {
			w.Header().Set("Retry-After", retryAfter)
		}
		// A collector may echo what it refused; none of it may reach an error.
		http.Error(w, "refused "+secretValue, code)
	}
}

func okReply(resp *coltrace.ExportTraceServiceResponse) func(w http.ResponseWriter) {
	return func(w http.ResponseWriter) {
		b, _ := proto.Marshal(resp)
		w.Header().Set("Content-Type", "application/x-protobuf")
		w.Write(b)
	}
}

func startCollector(t *testing.T, replies ...func(w http.ResponseWriter)) (*collector, *httpExporter) {
	t.Helper()
	c := &collector{replies: replies}
	srv := httptest.NewServer(c)
	t.Cleanup(srv.Close)
	u, err := TracesURL(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	return c, newHTTPExporter(u)
}

func TestHTTPExporterPostsProtobuf(t *testing.T) {
	ctx := testCtx(t)
	c, x := startCollector(t, okReply(&coltrace.ExportTraceServiceResponse{}))
	if err := x.ExportSpans(ctx, sampleSpans(t)); err != nil {
		t.Fatal(err)
	}
	if c.requests() != 1 || c.types[0] != "application/x-protobuf" || c.paths[0] != "/v1/traces" {
		t.Fatalf("%d requests, content types %v, paths %v", c.requests(), c.types, c.paths)
	}
	var req coltrace.ExportTraceServiceRequest
	if err := proto.Unmarshal(c.bodies[0], &req); err != nil || len(req.ResourceSpans) != 2 {
		t.Fatalf("body: %v, %d resource spans", err, len(req.ResourceSpans))
	}
}

// TestHTTPExporterRetriesBusyCollector: 503 with Retry-After, then 429
// without, then success: the same body three times.
func TestHTTPExporterRetriesBusyCollector(t *testing.T) {
	ctx := testCtx(t)
	c, x := startCollector(t, status(503, "0"), status(429, ""), okReply(&coltrace.ExportTraceServiceResponse{}))
	if err := x.ExportSpans(ctx, sampleSpans(t)); err != nil {
		t.Fatalf("export after two busy answers: %v", err)
	}
	if c.requests() != 3 || !bytes.Equal(c.bodies[0], c.bodies[2]) || !bytes.Equal(c.bodies[1], c.bodies[2]) {
		t.Fatalf("%d requests (want 3, the same body each time)", c.requests())
	}
}

func TestHTTPExporterGivesUpOnBusyCollector(t *testing.T) {
	ctx := testCtx(t)
	c, x := startCollector(t, status(503, "0"))
	err := x.ExportSpans(ctx, sampleSpans(t))
	if err == nil || !strings.Contains(err.Error(), "503") {
		t.Fatalf("export to an always-busy collector: %v, want a 503 error", err)
	}
	if c.requests() != exportAttempts {
		t.Errorf("%d requests, want %d", c.requests(), exportAttempts)
	}
	if strings.Contains(err.Error(), secretValue) {
		t.Errorf("error carries the collector's reply: %v", err)
	}
}

// TestHTTPExporterRefusalIsNotRetried: a 400 is final, and its error
// names the status, not the spans' values or the reply.
func TestHTTPExporterRefusalIsNotRetried(t *testing.T) {
	ctx := testCtx(t)
	c, x := startCollector(t, status(400, ""), okReply(&coltrace.ExportTraceServiceResponse{}))
	err := x.ExportSpans(ctx, sampleSpans(t))
	if err == nil || !strings.Contains(err.Error(), "400") || strings.Contains(err.Error(), secretValue) {
		t.Fatalf("error %v: want the 400 status and no attribute value", err)
	}
	if c.requests() != 1 {
		t.Errorf("%d requests after a 400, want 1", c.requests())
	}
}

func TestHTTPExporterReportsRejectedSpans(t *testing.T) {
	ctx := testCtx(t)
	_, x := startCollector(t, okReply(&coltrace.ExportTraceServiceResponse{
		PartialSuccess: &coltrace.ExportTracePartialSuccess{RejectedSpans: 2, ErrorMessage: "bad value " + secretValue},
	}))
	err := x.ExportSpans(ctx, sampleSpans(t))
	if err == nil || !strings.Contains(err.Error(), "rejected 2 of 3 spans") || strings.Contains(err.Error(), secretValue) {
		t.Fatalf("error %v: want 'rejected 2 of 3 spans' and not the collector's message", err)
	}
	// A partial success that rejected nothing is a success.
	_, x = startCollector(t, okReply(&coltrace.ExportTraceServiceResponse{PartialSuccess: &coltrace.ExportTracePartialSuccess{ErrorMessage: "warning"}}))
	if err := x.ExportSpans(ctx, sampleSpans(t)); err != nil {
		t.Fatalf("partial success with nothing rejected: %v", err)
	}
}

func TestHTTPExporterShutdown(t *testing.T) {
	ctx := testCtx(t)
	c, x := startCollector(t, okReply(&coltrace.ExportTraceServiceResponse{}))
	if err := x.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if err := x.ExportSpans(ctx, sampleSpans(t)); !errors.Is(err, errExporterShutdown) {
		t.Fatalf("export after shutdown: %v", err)
	}
	if c.requests() != 0 {
		t.Errorf("%d requests after shutdown", c.requests())
	}
}

// TestHTTPExporterUnreachable: a collector that is not there is an
// error once the attempts are spent, not a hang.
func TestHTTPExporterUnreachable(t *testing.T) {
	ctx := testCtx(t)
	srv := httptest.NewServer(http.NotFoundHandler())
	u, _ := TracesURL(srv.URL)
	srv.Close()
	x := newHTTPExporter(u)
	if err := x.ExportSpans(ctx, sampleSpans(t)); err == nil || !strings.Contains(err.Error(), "export 3 spans") {
		t.Fatalf("export to a closed port: %v", err)
	}
}

func TestRetryAfter(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, tc := range []struct {
		h    string
		want time.Duration
	}{
		{"", 0}, {"soon", 0}, {"-3", 0}, {"2", 2 * time.Second}, {" 1 ", time.Second},
		{"3600", maxRetryWait}, {"0", time.Millisecond},
		{now.Add(3 * time.Second).Format(http.TimeFormat), 3 * time.Second},
		{now.Add(time.Hour).Format(http.TimeFormat), maxRetryWait},
		{now.Add(-time.Hour).Format(http.TimeFormat), time.Millisecond},
	} {
		if got := retryAfter(tc.h, now); got != tc.want {
			t.Errorf("retryAfter(%q) = %s, want %s", tc.h, got, tc.want)
		}
	}
}
