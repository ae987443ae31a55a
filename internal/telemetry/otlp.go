package telemetry

import (
	"fmt"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	oteltrace "go.opentelemetry.io/otel/trace"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	resourcepb "go.opentelemetry.io/proto/otlp/resource/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
)

// This file encodes finished spans as an OTLP ExportTraceServiceRequest.
// The message types come from the proto/otlp trace, common and resource
// packages; the request wrapper is written with protowire because the
// collector package that declares it also carries gRPC service stubs,
// and gRPC (through golang.org/x/net/trace and html/template) would turn
// off the linker's dead-method elimination for the whole binary.

// exportRequest is the protobuf encoding of an ExportTraceServiceRequest
// holding spans, grouped by resource and then by instrumentation scope
// in the order they first appear.
func exportRequest(spans []sdktrace.ReadOnlySpan) ([]byte, error) {
	var out []byte
	for _, rs := range resourceSpans(spans) {
		b, err := proto.Marshal(rs)
		if err != nil {
			return nil, fmt.Errorf("telemetry: encode spans: %w", err)
		}
		// ExportTraceServiceRequest.resource_spans: field 1, repeated,
		// length-delimited.
		out = protowire.AppendTag(out, 1, protowire.BytesType)
		out = protowire.AppendBytes(out, b)
	}
	return out, nil
}

func resourceSpans(spans []sdktrace.ReadOnlySpan) []*tracepb.ResourceSpans {
	type resKey struct {
		res   attribute.Distinct
		rsURL string
	}
	var out []*tracepb.ResourceSpans
	byRes := map[resKey]*tracepb.ResourceSpans{}
	byScope := map[resKey]map[scopeKey]*tracepb.ScopeSpans{}
	for _, s := range spans {
		if s == nil {
			continue
		}
		res := s.Resource()
		rk := resKey{rsURL: res.SchemaURL()}
		if res != nil {
			rk.res = res.Equivalent()
		}
		rs := byRes[rk]
		if rs == nil {
			rs = &tracepb.ResourceSpans{Resource: resourceProto(res), SchemaUrl: res.SchemaURL()}
			byRes[rk] = rs
			byScope[rk] = map[scopeKey]*tracepb.ScopeSpans{}
			out = append(out, rs)
		}
		sc := s.InstrumentationScope()
		sk := scopeID(sc)
		ss := byScope[rk][sk]
		if ss == nil {
			ss = &tracepb.ScopeSpans{
				Scope: &commonpb.InstrumentationScope{
					Name: sc.Name, Version: sc.Version, Attributes: keyValues(sc.Attributes.ToSlice()),
				},
				SchemaUrl: sc.SchemaURL,
			}
			byScope[rk][sk] = ss
			rs.ScopeSpans = append(rs.ScopeSpans, ss)
		}
		ss.Spans = append(ss.Spans, spanProto(s))
	}
	return out
}

// scopeKey tells instrumentation scopes apart (a Scope holds an
// attribute set, which is not comparable as a value).
type scopeKey struct {
	name, version, schemaURL string
	attrs                    attribute.Distinct
}

func scopeID(sc instrumentation.Scope) scopeKey {
	return scopeKey{sc.Name, sc.Version, sc.SchemaURL, sc.Attributes.Equivalent()}
}

func resourceProto(r *resource.Resource) *resourcepb.Resource {
	if r == nil {
		return &resourcepb.Resource{}
	}
	return &resourcepb.Resource{Attributes: keyValues(r.Attributes())}
}

func spanProto(s sdktrace.ReadOnlySpan) *tracepb.Span {
	sc := s.SpanContext()
	tid, sid := sc.TraceID(), sc.SpanID()
	p := &tracepb.Span{
		TraceId:                tid[:],
		SpanId:                 sid[:],
		TraceState:             sc.TraceState().String(),
		Name:                   s.Name(),
		Kind:                   spanKind(s.SpanKind()),
		StartTimeUnixNano:      unixNano(s.StartTime()),
		EndTimeUnixNano:        unixNano(s.EndTime()),
		Attributes:             keyValues(s.Attributes()),
		DroppedAttributesCount: clampCount(s.DroppedAttributes()),
		DroppedEventsCount:     clampCount(s.DroppedEvents()),
		DroppedLinksCount:      clampCount(s.DroppedLinks()),
		Status:                 statusProto(s.Status()),
		Flags:                  spanFlags(sc.TraceFlags(), s.Parent().IsRemote()),
	}
	if parent := s.Parent(); parent.SpanID().IsValid() {
		psid := parent.SpanID()
		p.ParentSpanId = psid[:]
	}
	for _, ev := range s.Events() {
		p.Events = append(p.Events, &tracepb.Span_Event{
			TimeUnixNano:           unixNano(ev.Time),
			Name:                   ev.Name,
			Attributes:             keyValues(ev.Attributes),
			DroppedAttributesCount: clampCount(ev.DroppedAttributeCount),
		})
	}
	for _, l := range s.Links() {
		ltid, lsid := l.SpanContext.TraceID(), l.SpanContext.SpanID()
		p.Links = append(p.Links, &tracepb.Span_Link{
			TraceId:                ltid[:],
			SpanId:                 lsid[:],
			TraceState:             l.SpanContext.TraceState().String(),
			Attributes:             keyValues(l.Attributes),
			DroppedAttributesCount: clampCount(l.DroppedAttributeCount),
			Flags:                  spanFlags(l.SpanContext.TraceFlags(), l.SpanContext.IsRemote()),
		})
	}
	return p
}

// spanFlags is OTLP's flags word: the W3C trace flags in the low byte,
// and the bits saying the parent (or linked) context is known remote or
// local.
func spanFlags(tf oteltrace.TraceFlags, remote bool) uint32 {
	f := uint32(tf) | uint32(tracepb.SpanFlags_SPAN_FLAGS_CONTEXT_HAS_IS_REMOTE_MASK)
	if remote {
		f |= uint32(tracepb.SpanFlags_SPAN_FLAGS_CONTEXT_IS_REMOTE_MASK)
	}
	return f
}

func spanKind(k oteltrace.SpanKind) tracepb.Span_SpanKind {
	switch k {
	case oteltrace.SpanKindInternal:
		return tracepb.Span_SPAN_KIND_INTERNAL
	case oteltrace.SpanKindServer:
		return tracepb.Span_SPAN_KIND_SERVER
	case oteltrace.SpanKindClient:
		return tracepb.Span_SPAN_KIND_CLIENT
	case oteltrace.SpanKindProducer:
		return tracepb.Span_SPAN_KIND_PRODUCER
	case oteltrace.SpanKindConsumer:
		return tracepb.Span_SPAN_KIND_CONSUMER
	}
	return tracepb.Span_SPAN_KIND_UNSPECIFIED
}

// statusProto maps the SDK's status codes (Unset, Error, Ok) onto OTLP's
// (UNSET, OK, ERROR), which number them differently.
func statusProto(st sdktrace.Status) *tracepb.Status {
	switch st.Code {
	case codes.Error:
		return &tracepb.Status{Code: tracepb.Status_STATUS_CODE_ERROR, Message: st.Description}
	case codes.Ok:
		return &tracepb.Status{Code: tracepb.Status_STATUS_CODE_OK}
	}
	return &tracepb.Status{Code: tracepb.Status_STATUS_CODE_UNSET}
}

func unixNano(t time.Time) uint64 {
	if t.IsZero() || t.UnixNano() < 0 {
		return 0
	}
	return uint64(t.UnixNano())
}

func clampCount(n int) uint32 {
	if n < 0 {
		return 0
	}
	if uint64(n) > uint64(^uint32(0)) {
		return ^uint32(0)
	}
	return uint32(n)
}

func keyValues(kvs []attribute.KeyValue) []*commonpb.KeyValue {
	if len(kvs) == 0 {
		return nil
	}
	out := make([]*commonpb.KeyValue, 0, len(kvs))
	for _, kv := range kvs {
		out = append(out, &commonpb.KeyValue{Key: string(kv.Key), Value: anyValue(kv.Value)})
	}
	return out
}

// anyValue converts one attribute value; a value of a type this encoder
// does not know is sent empty rather than guessed at.
func anyValue(v attribute.Value) *commonpb.AnyValue {
	av := &commonpb.AnyValue{}
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
		av.Value = arrayOf(v.AsBoolSlice(), func(b bool) *commonpb.AnyValue {
			return &commonpb.AnyValue{Value: &commonpb.AnyValue_BoolValue{BoolValue: b}}
		})
	case attribute.INT64SLICE:
		av.Value = arrayOf(v.AsInt64Slice(), func(n int64) *commonpb.AnyValue {
			return &commonpb.AnyValue{Value: &commonpb.AnyValue_IntValue{IntValue: n}}
		})
	case attribute.FLOAT64SLICE:
		av.Value = arrayOf(v.AsFloat64Slice(), func(f float64) *commonpb.AnyValue {
			return &commonpb.AnyValue{Value: &commonpb.AnyValue_DoubleValue{DoubleValue: f}}
		})
	case attribute.STRINGSLICE:
		av.Value = arrayOf(v.AsStringSlice(), func(s string) *commonpb.AnyValue {
			return &commonpb.AnyValue{Value: &commonpb.AnyValue_StringValue{StringValue: s}}
		})
	case attribute.SLICE:
		av.Value = arrayOf(v.AsSlice(), anyValue)
	case attribute.MAP:
		av.Value = &commonpb.AnyValue_KvlistValue{KvlistValue: &commonpb.KeyValueList{Values: keyValues(v.AsMap())}}
	}
	return av
}

func arrayOf[T any](xs []T, conv func(T) *commonpb.AnyValue) *commonpb.AnyValue_ArrayValue {
	vals := make([]*commonpb.AnyValue, 0, len(xs))
	for _, x := range xs {
		vals = append(vals, conv(x))
	}
	return &commonpb.AnyValue_ArrayValue{ArrayValue: &commonpb.ArrayValue{Values: vals}}
}
