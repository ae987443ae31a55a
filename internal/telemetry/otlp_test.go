package telemetry

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
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
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	resourcepb "go.opentelemetry.io/proto/otlp/resource/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
)

// The hand-written encoder is checked against the generated OTLP message
// types: the same spans converted to those types (reference below, the
// encoder this package used before it wrote the wire format itself)
// and marshalled by google.golang.org/protobuf must decode to the same
// message as exportRequest's bytes.

// TestExportRequestMatchesGeneratedTypes: the fixed sample and 300
// random batches (every attribute type, nested slices and maps, empty
// and zero values, strings long enough for multi-byte lengths, several
// resources and scopes, events, links, every kind and status).
func TestExportRequestMatchesGeneratedTypes(t *testing.T) {
	check := func(name string, spans []sdktrace.ReadOnlySpan) {
		t.Helper()
		var got, want coltrace.ExportTraceServiceRequest
		if err := proto.Unmarshal(exportRequest(spans), &got); err != nil {
			t.Fatalf("%s: the request does not decode as an ExportTraceServiceRequest: %v", name, err)
		}
		wb, err := proto.Marshal(referenceRequest(spans))
		if err != nil {
			t.Fatal(err)
		}
		if err := proto.Unmarshal(wb, &want); err != nil {
			t.Fatal(err)
		}
		if !proto.Equal(&got, &want) {
			t.Fatalf("%s: the request differs from the generated types' encoding\ngot:  %v\nwant: %v", name, &got, &want)
		}
	}
	check("sample", sampleSpans(t))
	check("none", nil)
	r := rand.New(rand.NewPCG(11, 4))
	for i := range 300 {
		check(fmt.Sprintf("random batch %d", i), randomSpans(r))
	}
}

// TestExportRequestKeepsZeroValues: an attribute whose value is its
// type's zero (false, 0, "", no bytes, an empty list) still says which
// type it is, and an empty resource and a status of Unset are present as
// empty messages, as the generated types encode them.
func TestExportRequestKeepsZeroValues(t *testing.T) {
	spans := tracetest.SpanStubs{{
		Name: "zero", SpanContext: oteltrace.NewSpanContext(ids(1, 2)),
		Attributes: []attribute.KeyValue{
			attribute.Bool("b", false), attribute.Int64("i", 0), attribute.Float64("f", 0), attribute.String("s", ""),
			attribute.ByteSlice("y", nil), attribute.StringSlice("l", nil), attribute.Map("m"),
		},
	}}.Snapshots()
	var req coltrace.ExportTraceServiceRequest
	if err := proto.Unmarshal(exportRequest(spans), &req); err != nil {
		t.Fatal(err)
	}
	rs := req.ResourceSpans[0]
	s := rs.ScopeSpans[0].Spans[0]
	if rs.Resource == nil || s.Status == nil || rs.ScopeSpans[0].Scope == nil {
		t.Errorf("resource %v, status %v, scope %v: want each present", rs.Resource, s.Status, rs.ScopeSpans[0].Scope)
	}
	kinds := map[string]string{}
	for _, kv := range s.Attributes {
		kinds[kv.Key] = fmt.Sprintf("%T", kv.Value.GetValue())
	}
	want := map[string]string{
		"b": "*v1.AnyValue_BoolValue", "i": "*v1.AnyValue_IntValue", "f": "*v1.AnyValue_DoubleValue", "s": "*v1.AnyValue_StringValue",
		"y": "*v1.AnyValue_BytesValue", "l": "*v1.AnyValue_ArrayValue", "m": "*v1.AnyValue_KvlistValue",
	}
	for k, w := range want {
		if kinds[k] != w {
			t.Errorf("attribute %s decodes as %s, want %s", k, kinds[k], w)
		}
	}
}

// TestWireMatchesProtowire checks the wire helpers against protobuf's own
// protowire: varints at every length, and messages long enough that their
// length needs two and three bytes (appendMessage then moves them along).
func TestWireMatchesProtowire(t *testing.T) {
	for _, v := range []uint64{0, 1, 127, 128, 300, 16383, 16384, 1<<21 - 1, 1 << 21, 1<<63 - 1, 1 << 63, math.MaxUint64} {
		got := appendVarint(nil, v)
		if want := protowire.AppendVarint(nil, v); !bytes.Equal(got, want) {
			t.Errorf("varint %d: %x, want %x", v, got, want)
		}
		if back, n := consumeVarint(got); back != v || n != len(got) {
			t.Errorf("consumeVarint(%x) = %d, %d", got, back, n)
		}
	}
	for _, size := range []int{0, 1, 127, 128, 129, 16383, 16384, 70000} {
		body := strings.Repeat("x", size)
		got := appendMessage([]byte{0xee}, 5, func(b []byte) []byte { return append(b, body...) })
		want := protowire.AppendBytes(protowire.AppendTag([]byte{0xee}, 5, protowire.BytesType), []byte(body))
		if !bytes.Equal(got, want) {
			t.Errorf("message of %d bytes: encoded differently from protowire", size)
		}
	}
	if _, n := consumeVarint(bytes.Repeat([]byte{0xff}, 10)); n != -1 {
		t.Errorf("an 11-byte varint was read (%d bytes)", n)
	}
	if _, n := consumeVarint([]byte{0x80, 0x80}); n != -1 {
		t.Errorf("a cut varint was read (%d bytes)", n)
	}
}

// TestRejectedSpansReadsReplies: the partial-success count from replies
// the generated response type encodes (with the fields around it that a
// collector may set), and 0 from replies that are not well-formed.
func TestRejectedSpansReadsReplies(t *testing.T) {
	enc := func(r *coltrace.ExportTraceServiceResponse) []byte {
		b, err := proto.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	const pb = "application/x-protobuf"
	full := enc(&coltrace.ExportTraceServiceResponse{PartialSuccess: &coltrace.ExportTracePartialSuccess{RejectedSpans: 300, ErrorMessage: "bad"}})
	for _, tc := range []struct {
		name  string
		reply []byte
		ctype string
		want  int64
	}{
		{"rejected", full, pb, 300},
		{"fields in another order, an unknown one after", reorderedReply(), pb, 7},
		{"nothing rejected", enc(&coltrace.ExportTraceServiceResponse{PartialSuccess: &coltrace.ExportTracePartialSuccess{ErrorMessage: "warning"}}), pb, 0},
		{"empty", nil, pb, 0},
		{"json", full, "application/json", 0},
		{"cut short", full[:len(full)-2], pb, 0},
		{"group wire type", []byte{0x0b, 0x0c}, pb, 0},
		{"field number 0", []byte{0x02, 0x00}, pb, 0},
		{"length past the end", []byte{0x0a, 0x7f, 0x08, 0x01}, pb, 0},
	} {
		if got := rejectedSpans(tc.reply, tc.ctype); got != tc.want {
			t.Errorf("%s: rejectedSpans = %d, want %d", tc.name, got, tc.want)
		}
	}
}

// reorderedReply is a response whose partial_success has its
// error_message (2) before rejected_spans (1) = 7, followed by a field
// this version of OTLP does not define.
func reorderedReply() []byte {
	var partial []byte
	partial = protowire.AppendTag(partial, 2, protowire.BytesType)
	partial = protowire.AppendString(partial, "why")
	partial = protowire.AppendTag(partial, 1, protowire.VarintType)
	partial = protowire.AppendVarint(partial, 7)
	var b []byte
	b = protowire.AppendTag(b, 1, protowire.BytesType)
	b = protowire.AppendBytes(b, partial)
	b = protowire.AppendTag(b, 9, protowire.Fixed32Type)
	return protowire.AppendFixed32(b, 1)
}

// randomSpans is a batch of up to 6 spans over 2 resources and 2 scopes.
func randomSpans(r *rand.Rand) []sdktrace.ReadOnlySpan {
	resources := []*resource.Resource{
		resource.NewSchemaless(randomAttrs(r, 3)...),
		resource.NewWithAttributes("https://opentelemetry.io/schemas/1.26.0", randomAttrs(r, 2)...),
		resource.Empty(),
		nil,
	}
	scopes := []instrumentation.Scope{
		{Name: "github.com/ioh-lsp/ioh-lsp", Version: "v1"},
		{Name: "other", SchemaURL: "https://example.com/s", Attributes: attribute.NewSet(randomAttrs(r, 2)...)},
		{},
	}
	statuses := []sdktrace.Status{{}, {Code: codes.Ok}, {Code: codes.Error, Description: randomString(r)}, {Code: codes.Error}}
	var stubs tracetest.SpanStubs
	for range r.IntN(7) {
		cfg := ids(byte(r.IntN(256)), byte(1+r.IntN(255)))
		cfg.TraceFlags = oteltrace.TraceFlags(r.IntN(2))
		if r.IntN(3) == 0 {
			cfg.TraceState, _ = oteltrace.ParseTraceState("k=" + fmt.Sprint(r.IntN(100)))
		}
		var parent oteltrace.SpanContext
		if r.IntN(2) == 0 {
			pc := ids(cfg.TraceID[0], byte(1+r.IntN(255)))
			pc.Remote = r.IntN(2) == 0
			parent = oteltrace.NewSpanContext(pc)
		}
		start := time.Unix(int64(r.IntN(2_000_000_000)), int64(r.IntN(1e9)))
		if r.IntN(5) == 0 {
			start = time.Time{}
		}
		s := tracetest.SpanStub{
			Name: randomString(r), SpanContext: oteltrace.NewSpanContext(cfg), Parent: parent,
			SpanKind: oteltrace.SpanKind(r.IntN(7)), StartTime: start, EndTime: start.Add(time.Duration(r.IntN(1e9))),
			Attributes: randomAttrs(r, r.IntN(8)), Status: statuses[r.IntN(len(statuses))],
			DroppedAttributes: r.IntN(3), DroppedEvents: r.IntN(3), DroppedLinks: r.IntN(3),
			Resource: resources[r.IntN(len(resources))], InstrumentationScope: scopes[r.IntN(len(scopes))],
		}
		for range r.IntN(3) {
			s.Events = append(s.Events, sdktrace.Event{Name: randomString(r), Time: start.Add(time.Duration(r.IntN(1e6))), Attributes: randomAttrs(r, r.IntN(3)), DroppedAttributeCount: r.IntN(2)})
		}
		for range r.IntN(3) {
			lc := ids(byte(r.IntN(256)), byte(1+r.IntN(255)))
			lc.Remote = r.IntN(2) == 0
			lc.TraceFlags = oteltrace.TraceFlags(r.IntN(2))
			s.Links = append(s.Links, sdktrace.Link{SpanContext: oteltrace.NewSpanContext(lc), Attributes: randomAttrs(r, r.IntN(3)), DroppedAttributeCount: r.IntN(2)})
		}
		stubs = append(stubs, s)
	}
	return stubs.Snapshots()
}

func randomString(r *rand.Rand) string {
	switch r.IntN(4) {
	case 0:
		return ""
	case 1:
		return strings.Repeat("long é ", 20+r.IntN(3000)) // 2- and 3-byte lengths
	}
	return fmt.Sprintf("s%d", r.IntN(1000))
}

func randomAttrs(r *rand.Rand, n int) []attribute.KeyValue {
	out := make([]attribute.KeyValue, 0, n)
	for i := range n {
		out = append(out, attribute.KeyValue{Key: attribute.Key(fmt.Sprintf("k%d", i)), Value: randomValue(r, 2)})
	}
	return out
}

func randomValue(r *rand.Rand, depth int) attribute.Value {
	kinds := 10
	if depth > 0 {
		kinds = 12
	}
	switch r.IntN(kinds) {
	case 0:
		return attribute.BoolValue(r.IntN(2) == 0)
	case 1:
		return attribute.Int64Value([]int64{0, -1, math.MinInt64, math.MaxInt64, r.Int64()}[r.IntN(5)])
	case 2:
		return attribute.Float64Value([]float64{0, -0.5, math.Inf(1), math.MaxFloat64, r.Float64()}[r.IntN(5)])
	case 3:
		return attribute.StringValue(randomString(r))
	case 4:
		return attribute.BoolSliceValue([]bool{true, false}[:r.IntN(3)])
	case 5:
		return attribute.Int64SliceValue([]int64{-3, 0, 1 << 40}[:r.IntN(4)])
	case 6:
		return attribute.Float64SliceValue([]float64{1.5, 0}[:r.IntN(3)])
	case 7:
		return attribute.StringSliceValue([]string{"a", "", randomString(r)}[:r.IntN(4)])
	case 8:
		return attribute.ByteSliceValue([]byte(randomString(r)))
	case 9:
		return attribute.Value{} // EMPTY
	case 10:
		vals := make([]attribute.Value, r.IntN(3))
		for i := range vals {
			vals[i] = randomValue(r, depth-1)
		}
		return attribute.SliceValue(vals...)
	}
	kvs := make([]attribute.KeyValue, r.IntN(3))
	for i := range kvs {
		kvs[i] = attribute.KeyValue{Key: attribute.Key(fmt.Sprintf("m%d", i)), Value: randomValue(r, depth-1)}
	}
	return attribute.MapValue(kvs...)
}

// referenceRequest converts spans with the generated OTLP types, grouped
// by resource and then scope in the order they first appear.
func referenceRequest(spans []sdktrace.ReadOnlySpan) *coltrace.ExportTraceServiceRequest {
	type resKey struct {
		res   attribute.Distinct
		rsURL string
	}
	req := &coltrace.ExportTraceServiceRequest{}
	byRes := map[resKey]*tracepb.ResourceSpans{}
	byScope := map[resKey]map[scopeKey]*tracepb.ScopeSpans{}
	for _, s := range spans {
		res := s.Resource()
		rk := resKey{rsURL: res.SchemaURL()}
		if res != nil {
			rk.res = res.Equivalent()
		}
		rs := byRes[rk]
		if rs == nil {
			rs = &tracepb.ResourceSpans{Resource: &resourcepb.Resource{}, SchemaUrl: res.SchemaURL()}
			if res != nil {
				rs.Resource.Attributes = refKeyValues(res.Attributes())
			}
			byRes[rk] = rs
			byScope[rk] = map[scopeKey]*tracepb.ScopeSpans{}
			req.ResourceSpans = append(req.ResourceSpans, rs)
		}
		sc := s.InstrumentationScope()
		sk := scopeKey{sc.Name, sc.Version, sc.SchemaURL, sc.Attributes.Equivalent()}
		ss := byScope[rk][sk]
		if ss == nil {
			ss = &tracepb.ScopeSpans{
				Scope:     &commonpb.InstrumentationScope{Name: sc.Name, Version: sc.Version, Attributes: refKeyValues(sc.Attributes.ToSlice())},
				SchemaUrl: sc.SchemaURL,
			}
			byScope[rk][sk] = ss
			rs.ScopeSpans = append(rs.ScopeSpans, ss)
		}
		ss.Spans = append(ss.Spans, refSpan(s))
	}
	return req
}

func refSpan(s sdktrace.ReadOnlySpan) *tracepb.Span {
	sc := s.SpanContext()
	tid, sid := sc.TraceID(), sc.SpanID()
	p := &tracepb.Span{
		TraceId: tid[:], SpanId: sid[:], TraceState: sc.TraceState().String(), Name: s.Name(),
		Kind:              map[oteltrace.SpanKind]tracepb.Span_SpanKind{oteltrace.SpanKindInternal: tracepb.Span_SPAN_KIND_INTERNAL, oteltrace.SpanKindServer: tracepb.Span_SPAN_KIND_SERVER, oteltrace.SpanKindClient: tracepb.Span_SPAN_KIND_CLIENT, oteltrace.SpanKindProducer: tracepb.Span_SPAN_KIND_PRODUCER, oteltrace.SpanKindConsumer: tracepb.Span_SPAN_KIND_CONSUMER}[s.SpanKind()],
		StartTimeUnixNano: unixNano(s.StartTime()), EndTimeUnixNano: unixNano(s.EndTime()),
		Attributes:             refKeyValues(s.Attributes()),
		DroppedAttributesCount: uint32(s.DroppedAttributes()), DroppedEventsCount: uint32(s.DroppedEvents()), DroppedLinksCount: uint32(s.DroppedLinks()),
		Status: &tracepb.Status{},
		Flags:  refFlags(sc.TraceFlags(), s.Parent().IsRemote()),
	}
	switch s.Status().Code {
	case codes.Error:
		p.Status = &tracepb.Status{Code: tracepb.Status_STATUS_CODE_ERROR, Message: s.Status().Description}
	case codes.Ok:
		p.Status = &tracepb.Status{Code: tracepb.Status_STATUS_CODE_OK}
	}
	if psid := s.Parent().SpanID(); psid.IsValid() {
		p.ParentSpanId = psid[:]
	}
	for _, ev := range s.Events() {
		p.Events = append(p.Events, &tracepb.Span_Event{TimeUnixNano: unixNano(ev.Time), Name: ev.Name, Attributes: refKeyValues(ev.Attributes), DroppedAttributesCount: uint32(ev.DroppedAttributeCount)})
	}
	for _, l := range s.Links() {
		ltid, lsid := l.SpanContext.TraceID(), l.SpanContext.SpanID()
		p.Links = append(p.Links, &tracepb.Span_Link{
			TraceId: ltid[:], SpanId: lsid[:], TraceState: l.SpanContext.TraceState().String(),
			Attributes: refKeyValues(l.Attributes), DroppedAttributesCount: uint32(l.DroppedAttributeCount),
			Flags: refFlags(l.SpanContext.TraceFlags(), l.SpanContext.IsRemote()),
		})
	}
	return p
}

func refFlags(tf oteltrace.TraceFlags, remote bool) uint32 {
	f := uint32(tf) | uint32(tracepb.SpanFlags_SPAN_FLAGS_CONTEXT_HAS_IS_REMOTE_MASK)
	if remote {
		f |= uint32(tracepb.SpanFlags_SPAN_FLAGS_CONTEXT_IS_REMOTE_MASK)
	}
	return f
}

func refKeyValues(kvs []attribute.KeyValue) []*commonpb.KeyValue {
	var out []*commonpb.KeyValue
	for _, kv := range kvs {
		out = append(out, &commonpb.KeyValue{Key: string(kv.Key), Value: refAnyValue(kv.Value)})
	}
	return out
}

func refAnyValue(v attribute.Value) *commonpb.AnyValue {
	av := &commonpb.AnyValue{}
	array := func(vals []*commonpb.AnyValue) *commonpb.AnyValue_ArrayValue {
		return &commonpb.AnyValue_ArrayValue{ArrayValue: &commonpb.ArrayValue{Values: vals}}
	}
	switch v.Type() {
	case attribute.BOOL:
		av.Value = &commonpb.AnyValue_BoolValue{BoolValue: v.AsBool()}
	case attribute.INT64:
		av.Value = &commonpb.AnyValue_IntValue{IntValue: v.AsInt64()}
	case attribute.FLOAT64:
		av.Value = &commonpb.AnyValue_DoubleValue{DoubleValue: v.AsFloat64()}
	case attribute.STRING:
		av.Value = &commonpb.AnyValue_StringValue{StringValue: v.AsString()}
	case attribute.BYTESLICE:
		av.Value = &commonpb.AnyValue_BytesValue{BytesValue: v.AsByteSlice()}
	case attribute.BOOLSLICE:
		var vals []*commonpb.AnyValue
		for _, x := range v.AsBoolSlice() {
			vals = append(vals, refAnyValue(attribute.BoolValue(x)))
		}
		av.Value = array(vals)
	case attribute.INT64SLICE:
		var vals []*commonpb.AnyValue
		for _, x := range v.AsInt64Slice() {
			vals = append(vals, refAnyValue(attribute.Int64Value(x)))
		}
		av.Value = array(vals)
	case attribute.FLOAT64SLICE:
		var vals []*commonpb.AnyValue
		for _, x := range v.AsFloat64Slice() {
			vals = append(vals, refAnyValue(attribute.Float64Value(x)))
		}
		av.Value = array(vals)
	case attribute.STRINGSLICE:
		var vals []*commonpb.AnyValue
		for _, x := range v.AsStringSlice() {
			vals = append(vals, refAnyValue(attribute.StringValue(x)))
		}
		av.Value = array(vals)
	case attribute.SLICE:
		var vals []*commonpb.AnyValue
		for _, x := range v.AsSlice() {
			vals = append(vals, refAnyValue(x))
		}
		av.Value = array(vals)
	case attribute.MAP:
		av.Value = &commonpb.AnyValue_KvlistValue{KvlistValue: &commonpb.KeyValueList{Values: refKeyValues(v.AsMap())}}
	}
	return av
}
