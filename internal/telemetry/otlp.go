package telemetry

import (
	"math"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	oteltrace "go.opentelemetry.io/otel/trace"
)

// This file encodes finished spans as an OTLP ExportTraceServiceRequest
// (opentelemetry-proto v1: collector/trace/v1, trace/v1, resource/v1,
// common/v1) straight to protobuf bytes with pbwire.go. The field
// numbers below are those of the .proto files; the tests decode the
// result with the generated OTLP message types and compare it with what
// those types encode for the same spans.

// OTLP field numbers, by message.
const (
	exportResourceSpans = 1 // ExportTraceServiceRequest.resource_spans

	resourceSpansResource   = 1 // ResourceSpans
	resourceSpansScopeSpans = 2
	resourceSpansSchemaURL  = 3

	resourceAttributes = 1 // Resource

	scopeSpansScope     = 1 // ScopeSpans
	scopeSpansSpans     = 2
	scopeSpansSchemaURL = 3

	scopeName       = 1 // InstrumentationScope
	scopeVersion    = 2
	scopeAttributes = 3

	spanTraceID           = 1 // Span
	spanSpanID            = 2
	spanTraceState        = 3
	spanParentSpanID      = 4
	spanName              = 5
	spanKind              = 6
	spanStartTime         = 7
	spanEndTime           = 8
	spanAttributes        = 9
	spanDroppedAttributes = 10
	spanEvents            = 11
	spanDroppedEvents     = 12
	spanLinks             = 13
	spanDroppedLinks      = 14
	spanStatus            = 15
	spanFlagsField        = 16

	eventTime              = 1 // Span.Event
	eventName              = 2
	eventAttributes        = 3
	eventDroppedAttributes = 4

	linkTraceID           = 1 // Span.Link
	linkSpanID            = 2
	linkTraceState        = 3
	linkAttributes        = 4
	linkDroppedAttributes = 5
	linkFlags             = 6

	statusMessage = 2 // Status
	statusCode    = 3

	keyValueKey   = 1 // KeyValue
	keyValueValue = 2

	anyString = 1 // AnyValue, a oneof
	anyBool   = 2
	anyInt    = 3
	anyDouble = 4
	anyArray  = 5
	anyKVList = 6
	anyBytes  = 7

	listValues = 1 // ArrayValue.values, KeyValueList.values
)

// OTLP enum values: Span.SpanKind, Status.StatusCode (numbered unlike the
// SDK's codes: Unset, Error, Ok) and the SpanFlags bits above the W3C
// trace flags.
const (
	kindUnspecified = 0
	kindInternal    = 1
	kindServer      = 2
	kindClient      = 3
	kindProducer    = 4
	kindConsumer    = 5

	statusUnset = 0
	statusOK    = 1
	statusError = 2

	flagHasIsRemote = 0x100
	flagIsRemote    = 0x200
)

// exportRequest is the protobuf encoding of an ExportTraceServiceRequest
// holding spans, grouped by resource and then by instrumentation scope
// in the order they first appear.
func exportRequest(spans []sdktrace.ReadOnlySpan) []byte {
	var out []byte
	for _, rg := range groupSpans(spans) {
		out = appendMessage(out, exportResourceSpans, rg.appendTo)
	}
	return out
}

// resourceGroup is one ResourceSpans: a resource's spans by scope.
type resourceGroup struct {
	res    *resource.Resource
	scopes []*scopeGroup
}

// scopeGroup is one ScopeSpans.
type scopeGroup struct {
	scope instrumentation.Scope
	spans []sdktrace.ReadOnlySpan
}

// scopeKey tells instrumentation scopes apart (a Scope holds an
// attribute set, which is not comparable as a value).
type scopeKey struct {
	name, version, schemaURL string
	attrs                    attribute.Distinct
}

func groupSpans(spans []sdktrace.ReadOnlySpan) []*resourceGroup {
	type resKey struct {
		res   attribute.Distinct
		rsURL string
	}
	var out []*resourceGroup
	byRes := map[resKey]*resourceGroup{}
	byScope := map[resKey]map[scopeKey]*scopeGroup{}
	for _, s := range spans {
		if s == nil {
			continue
		}
		res := s.Resource()
		rk := resKey{rsURL: res.SchemaURL()}
		if res != nil {
			rk.res = res.Equivalent()
		}
		rg := byRes[rk]
		if rg == nil {
			rg = &resourceGroup{res: res}
			byRes[rk] = rg
			byScope[rk] = map[scopeKey]*scopeGroup{}
			out = append(out, rg)
		}
		sc := s.InstrumentationScope()
		sk := scopeKey{sc.Name, sc.Version, sc.SchemaURL, sc.Attributes.Equivalent()}
		sg := byScope[rk][sk]
		if sg == nil {
			sg = &scopeGroup{scope: sc}
			byScope[rk][sk] = sg
			rg.scopes = append(rg.scopes, sg)
		}
		sg.spans = append(sg.spans, s)
	}
	return out
}

// appendTo encodes the group as a ResourceSpans; its Resource is present
// even when it has no attributes.
func (rg *resourceGroup) appendTo(b []byte) []byte {
	b = appendMessage(b, resourceSpansResource, func(b []byte) []byte {
		if rg.res == nil {
			return b
		}
		return appendKeyValues(b, resourceAttributes, rg.res.Attributes())
	})
	for _, sg := range rg.scopes {
		b = appendMessage(b, resourceSpansScopeSpans, sg.appendTo)
	}
	return appendStringField(b, resourceSpansSchemaURL, rg.res.SchemaURL())
}

func (sg *scopeGroup) appendTo(b []byte) []byte {
	sc := sg.scope
	b = appendMessage(b, scopeSpansScope, func(b []byte) []byte {
		b = appendStringField(b, scopeName, sc.Name)
		b = appendStringField(b, scopeVersion, sc.Version)
		return appendKeyValues(b, scopeAttributes, sc.Attributes.ToSlice())
	})
	for _, s := range sg.spans {
		b = appendMessage(b, scopeSpansSpans, func(b []byte) []byte { return appendSpan(b, s) })
	}
	return appendStringField(b, scopeSpansSchemaURL, sc.SchemaURL)
}

func appendSpan(b []byte, s sdktrace.ReadOnlySpan) []byte {
	sc := s.SpanContext()
	tid, sid := sc.TraceID(), sc.SpanID()
	b = appendBytesField(b, spanTraceID, tid[:])
	b = appendBytesField(b, spanSpanID, sid[:])
	b = appendStringField(b, spanTraceState, sc.TraceState().String())
	if parent := s.Parent(); parent.SpanID().IsValid() {
		psid := parent.SpanID()
		b = appendBytesField(b, spanParentSpanID, psid[:])
	}
	b = appendStringField(b, spanName, s.Name())
	b = appendVarintField(b, spanKind, otlpKind(s.SpanKind()))
	b = appendFixed64Field(b, spanStartTime, unixNano(s.StartTime()))
	b = appendFixed64Field(b, spanEndTime, unixNano(s.EndTime()))
	b = appendKeyValues(b, spanAttributes, s.Attributes())
	b = appendVarintField(b, spanDroppedAttributes, uint64(clampCount(s.DroppedAttributes())))
	for _, ev := range s.Events() {
		b = appendMessage(b, spanEvents, func(b []byte) []byte {
			b = appendFixed64Field(b, eventTime, unixNano(ev.Time))
			b = appendStringField(b, eventName, ev.Name)
			b = appendKeyValues(b, eventAttributes, ev.Attributes)
			return appendVarintField(b, eventDroppedAttributes, uint64(clampCount(ev.DroppedAttributeCount)))
		})
	}
	b = appendVarintField(b, spanDroppedEvents, uint64(clampCount(s.DroppedEvents())))
	for _, l := range s.Links() {
		b = appendMessage(b, spanLinks, func(b []byte) []byte {
			ltid, lsid := l.SpanContext.TraceID(), l.SpanContext.SpanID()
			b = appendBytesField(b, linkTraceID, ltid[:])
			b = appendBytesField(b, linkSpanID, lsid[:])
			b = appendStringField(b, linkTraceState, l.SpanContext.TraceState().String())
			b = appendKeyValues(b, linkAttributes, l.Attributes)
			b = appendVarintField(b, linkDroppedAttributes, uint64(clampCount(l.DroppedAttributeCount)))
			return appendFixed32Field(b, linkFlags, spanFlags(l.SpanContext.TraceFlags(), l.SpanContext.IsRemote()))
		})
	}
	b = appendVarintField(b, spanDroppedLinks, uint64(clampCount(s.DroppedLinks())))
	st := s.Status()
	b = appendMessage(b, spanStatus, func(b []byte) []byte {
		// Only an error carries a message (the SDK keeps none for Ok).
		switch st.Code {
		case codes.Error:
			b = appendStringField(b, statusMessage, st.Description)
			return appendVarintField(b, statusCode, statusError)
		case codes.Ok:
			return appendVarintField(b, statusCode, statusOK)
		}
		return b
	})
	return appendFixed32Field(b, spanFlagsField, spanFlags(sc.TraceFlags(), s.Parent().IsRemote()))
}

// spanFlags is OTLP's flags word: the W3C trace flags in the low byte,
// and the bits saying the parent (or linked) context is known remote or
// local.
func spanFlags(tf oteltrace.TraceFlags, remote bool) uint32 {
	f := uint32(tf) | flagHasIsRemote
	if remote {
		f |= flagIsRemote
	}
	return f
}

func otlpKind(k oteltrace.SpanKind) uint64 {
	switch k {
	case oteltrace.SpanKindInternal:
		return kindInternal
	case oteltrace.SpanKindServer:
		return kindServer
	case oteltrace.SpanKindClient:
		return kindClient
	case oteltrace.SpanKindProducer:
		return kindProducer
	case oteltrace.SpanKindConsumer:
		return kindConsumer
	}
	return kindUnspecified
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

// appendKeyValues writes each attribute as a KeyValue in field num.
func appendKeyValues(b []byte, num int, kvs []attribute.KeyValue) []byte {
	for _, kv := range kvs {
		b = appendMessage(b, num, func(b []byte) []byte {
			b = appendStringField(b, keyValueKey, string(kv.Key))
			return appendMessage(b, keyValueValue, func(b []byte) []byte { return appendAnyValue(b, kv.Value) })
		})
	}
	return b
}

// appendAnyValue writes one attribute value as an AnyValue's fields; a
// value of a type this encoder does not know is sent empty rather than
// guessed at. The oneof's member is written even when it holds a zero
// value (false, 0, ""): its presence is the value's type.
func appendAnyValue(b []byte, v attribute.Value) []byte {
	switch v.Type() {
	case attribute.BOOL:
		var n uint64
		if v.AsBool() {
			n = 1
		}
		return appendVarint(appendTag(b, anyBool, wireVarint), n)
	case attribute.INT64:
		return appendVarint(appendTag(b, anyInt, wireVarint), uint64(v.AsInt64()))
	case attribute.FLOAT64:
		return appendFixed64(appendTag(b, anyDouble, wireFixed64), math.Float64bits(v.AsFloat64()))
	case attribute.STRING:
		return appendString(b, anyString, v.AsString())
	case attribute.BYTESLICE:
		return appendString(b, anyBytes, string(v.AsByteSlice()))
	case attribute.BOOLSLICE:
		return appendArray(b, v.AsBoolSlice(), attribute.BoolValue)
	case attribute.INT64SLICE:
		return appendArray(b, v.AsInt64Slice(), attribute.Int64Value)
	case attribute.FLOAT64SLICE:
		return appendArray(b, v.AsFloat64Slice(), attribute.Float64Value)
	case attribute.STRINGSLICE:
		return appendArray(b, v.AsStringSlice(), attribute.StringValue)
	case attribute.SLICE:
		return appendArray(b, v.AsSlice(), func(v attribute.Value) attribute.Value { return v })
	case attribute.MAP:
		return appendMessage(b, anyKVList, func(b []byte) []byte {
			return appendKeyValues(b, listValues, v.AsMap())
		})
	}
	return b
}

// appendArray writes xs as an AnyValue's ArrayValue, each element
// converted to an attribute value first.
func appendArray[T any](b []byte, xs []T, conv func(T) attribute.Value) []byte {
	return appendMessage(b, anyArray, func(b []byte) []byte {
		for _, x := range xs {
			b = appendMessage(b, listValues, func(b []byte) []byte { return appendAnyValue(b, conv(x)) })
		}
		return b
	})
}
