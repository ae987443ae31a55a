package telemetry

import (
	"context"
	"fmt"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	oteltrace "go.opentelemetry.io/otel/trace"

	"github.com/ioh-lsp/ioh-lsp/agent/trace"
)

// state holds the open spans of the runs in flight.
type state struct {
	e    *Exporter
	mu   sync.Mutex
	runs map[string]*runSpans
}

// runSpans is one run's open spans.
type runSpans struct {
	ctx      context.Context // carries the run span
	span     oteltrace.Span
	step     int
	stepSpan oteltrace.Span
	stepCtx  context.Context
	last     time.Time // the run's previous event: where a model call began
	// verdicts holds the policy verdicts (and approvals) of a tool's call
	// until its tool_call event opens the span they belong to.
	verdicts map[string][]attribute.KeyValue
	calls    map[string]oteltrace.Span // by call id
}

func newState(e *Exporter) *state { return &state{e: e, runs: map[string]*runSpans{}} }

// str reads a string field, redacted.
func (s *state) str(f map[string]any, k string) string {
	v, _ := f[k].(string)
	return s.e.redact.String(v)
}

func num(f map[string]any, k string) int64 {
	switch v := f[k].(type) {
	case int:
		return int64(v)
	case int64:
		return v
	case float64:
		return int64(v)
	}
	return 0
}

func (s *state) emit(ev trace.Event) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.runs[ev.Run]
	if r == nil {
		r = s.startRun(ev)
	}
	if ev.Type == trace.EventOutcome {
		s.endRun(ev.Run, r, ev.Time, s.str(ev.Fields, "outcome"))
		return
	}
	if ev.Type != trace.EventRunStarted {
		s.atStep(r, ev)
	}
	switch ev.Type {
	case trace.EventModelTurn:
		s.modelCall(r, ev)
	case trace.EventPolicy, trace.EventApproval:
		s.verdict(r, ev)
	case trace.EventToolCall:
		s.toolCall(r, ev)
	case trace.EventToolResult:
		s.toolResult(r, ev)
	case trace.EventVerification:
		s.checks(r, ev)
	}
	r.last = ev.Time
}

// startRun opens a run's span: under its parent's step for a sub-agent,
// under the caller's span when the run carries a traceparent, else a
// new trace. A run first seen after run_started (resumed) gets its span
// then.
func (s *state) startRun(ev trace.Event) *runSpans {
	ctx := context.Background()
	if p := s.runs[ev.Parent]; ev.Parent != "" && p != nil {
		ctx = p.ctx
		if p.stepCtx != nil {
			ctx = p.stepCtx
		}
	} else if ev.Type == trace.EventRunStarted {
		ctx = remoteParent(ctx, s.str(ev.Fields, "traceparent"), s.str(ev.Fields, "tracestate"))
	}
	attrs := []attribute.KeyValue{
		attribute.String(attrOperation, opInvokeAgent), attribute.String(attrRunID, ev.Run), attribute.String(attrAgentID, ev.Run),
	}
	if ev.Parent != "" {
		attrs = append(attrs, attribute.String(attrParentRun, ev.Parent))
	}
	if ev.Type == trace.EventRunStarted {
		goal := s.str(ev.Fields, "goal")
		if len(goal) > 200 {
			goal = goal[:200] + "…"
		}
		attrs = append(attrs, attribute.String(attrGoal, goal))
		if p := s.str(ev.Fields, "provider"); p != "" {
			attrs = append(attrs, attribute.String(attrProvider, p))
		}
		if m := s.str(ev.Fields, "model"); m != "" {
			attrs = append(attrs, attribute.String(attrRequestModel, m))
		}
	}
	ctx, span := s.e.tracer.Start(ctx, spanRun, oteltrace.WithTimestamp(ev.Time), oteltrace.WithAttributes(attrs...), oteltrace.WithSpanKind(oteltrace.SpanKindInternal))
	r := &runSpans{ctx: ctx, span: span, last: ev.Time, verdicts: map[string][]attribute.KeyValue{}, calls: map[string]oteltrace.Span{}}
	s.runs[ev.Run] = r
	return r
}

// atStep opens the span of ev's step, ending the previous one; a step
// begins where the run's previous event ended (its model call is sent
// then).
func (s *state) atStep(r *runSpans, ev trace.Event) {
	if r.stepSpan != nil && r.step == ev.Step {
		return
	}
	if r.stepSpan != nil {
		r.stepSpan.End(oteltrace.WithTimestamp(r.last))
	}
	r.step = ev.Step
	r.stepCtx, r.stepSpan = s.e.tracer.Start(r.ctx, fmt.Sprintf("%s %d", spanStep, ev.Step), oteltrace.WithTimestamp(r.last),
		oteltrace.WithAttributes(attribute.Int(attrStep, ev.Step), attribute.String(attrRunID, ev.Run)))
}

func (s *state) modelCall(r *runSpans, ev trace.Event) {
	f := ev.Fields
	model := s.str(f, "model")
	attrs := []attribute.KeyValue{
		attribute.String(attrOperation, opChat), attribute.String(attrProvider, s.str(f, "provider")),
		attribute.String(attrResponseModel, model),
		attribute.Int64(attrInputTokens, num(f, "input_tokens")), attribute.Int64(attrOutputTokens, num(f, "output_tokens")),
		attribute.Int64(attrCacheReadTokens, num(f, "cache_read_tokens")), attribute.Int64(attrCacheWriteTokens, num(f, "cache_write_tokens")),
		attribute.String(attrCostSource, s.str(f, "cost_source")),
	}
	if c, ok := f["cost_usd"].(float64); ok {
		attrs = append(attrs, attribute.Float64(attrCostUSD, c))
	}
	_, span := s.e.tracer.Start(r.stepCtx, opChat+" "+model, oteltrace.WithTimestamp(r.last), oteltrace.WithAttributes(attrs...), oteltrace.WithSpanKind(oteltrace.SpanKindClient))
	span.End(oteltrace.WithTimestamp(ev.Time))
}

// verdict keeps a policy verdict or an approval for the call it belongs
// to; a denied call never runs, so its span is recorded at once.
func (s *state) verdict(r *runSpans, ev trace.Event) {
	f := ev.Fields
	tool := s.str(f, "tool")
	if tool == "" {
		return // the final change's approval: not a tool call
	}
	var attrs []attribute.KeyValue
	denied := false
	if ev.Type == trace.EventPolicy {
		attrs = []attribute.KeyValue{
			attribute.String(attrAct, s.str(f, "act")), attribute.String(attrTarget, s.str(f, "target")),
			attribute.String(attrEffect, s.str(f, "effect")), attribute.String(attrRule, s.str(f, "rule")),
			attribute.String(attrLayer, s.str(f, "layer")),
		}
		denied = s.str(f, "effect") == "deny"
	} else {
		answer := s.str(f, "answer")
		attrs = []attribute.KeyValue{attribute.String(attrAnswer, answer)}
		denied = answer == "deny"
	}
	r.verdicts[tool] = append(r.verdicts[tool], attrs...)
	if !denied {
		return
	}
	all := append([]attribute.KeyValue{attribute.String(attrOperation, opExecuteTool), attribute.String(attrToolName, tool)}, r.verdicts[tool]...)
	delete(r.verdicts, tool)
	_, span := s.e.tracer.Start(r.stepCtx, opExecuteTool+" "+tool, oteltrace.WithTimestamp(ev.Time), oteltrace.WithAttributes(all...))
	span.SetStatus(codes.Error, "denied")
	span.End(oteltrace.WithTimestamp(ev.Time))
}

func (s *state) toolCall(r *runSpans, ev trace.Event) {
	tool, id := s.str(ev.Fields, "tool"), s.str(ev.Fields, "id")
	attrs := append([]attribute.KeyValue{
		attribute.String(attrOperation, opExecuteTool), attribute.String(attrToolName, tool), attribute.String(attrToolCallID, id),
	}, r.verdicts[tool]...)
	delete(r.verdicts, tool)
	_, span := s.e.tracer.Start(r.stepCtx, opExecuteTool+" "+tool, oteltrace.WithTimestamp(ev.Time), oteltrace.WithAttributes(attrs...))
	r.calls[id] = span
}

func (s *state) toolResult(r *runSpans, ev trace.Event) {
	id := s.str(ev.Fields, "id")
	span := r.calls[id]
	if span == nil {
		return
	}
	delete(r.calls, id)
	isErr, _ := ev.Fields["is_error"].(bool)
	span.SetAttributes(attribute.Bool(attrToolError, isErr), attribute.Int64(attrResultBytes, num(ev.Fields, "bytes")))
	if isErr {
		span.SetStatus(codes.Error, "the tool reported an error")
	}
	span.End(oteltrace.WithTimestamp(ev.Time))
}

// checks records each check of a verification as a span ending at the
// event, as long as the check took.
func (s *state) checks(r *runSpans, ev trace.Event) {
	var list []map[string]any
	switch v := ev.Fields["checks"].(type) {
	case []map[string]any:
		list = v
	case []any:
		for _, x := range v {
			if m, ok := x.(map[string]any); ok {
				list = append(list, m)
			}
		}
	}
	for _, c := range list {
		ms := num(c, "duration_ms")
		passed, _ := c["passed"].(bool)
		name := s.str(c, "name")
		_, span := s.e.tracer.Start(r.stepCtx, spanCheck+" "+name, oteltrace.WithTimestamp(ev.Time.Add(-time.Duration(ms)*time.Millisecond)),
			oteltrace.WithAttributes(attribute.String(attrCheckName, name), attribute.String(attrCheckPhase, s.str(c, "phase")),
				attribute.String(attrCheckBackend, s.str(c, "backend")), attribute.Int64(attrCheckExit, num(c, "exit_code")),
				attribute.Bool(attrCheckPassed, passed), attribute.Int64(attrCheckMillis, ms)))
		if !passed && s.str(c, "phase") != "red" {
			span.SetStatus(codes.Error, "check failed")
		}
		span.End(oteltrace.WithTimestamp(ev.Time))
	}
}

// endRun closes everything the run left open and its span.
func (s *state) endRun(id string, r *runSpans, at time.Time, outcome string) {
	for cid, span := range r.calls {
		span.SetStatus(codes.Error, "no result")
		span.End(oteltrace.WithTimestamp(at))
		delete(r.calls, cid)
	}
	if r.stepSpan != nil {
		r.stepSpan.End(oteltrace.WithTimestamp(at))
	}
	r.span.SetAttributes(attribute.String(attrOutcome, outcome))
	switch outcome {
	case "verified", "applied", "unverified", "awaiting_approval":
	default:
		r.span.SetStatus(codes.Error, outcome)
	}
	r.span.End(oteltrace.WithTimestamp(at))
	delete(s.runs, id)
}

// endAll ends the runs still open (the process is stopping).
func (s *state) endAll(at time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for id, r := range s.runs {
		s.endRun(id, r, at, "interrupted")
	}
}
