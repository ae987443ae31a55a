package telemetry

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/ioh-lsp/ioh-lsp/internal/agent/event"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	oteltrace "go.opentelemetry.io/otel/trace"
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

// str redacts a string field.
func (s *state) str(v string) string { return s.e.redact.String(v) }

func (s *state) emit(ev event.Event) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.runs[ev.Run]
	if r == nil {
		r = s.startRun(ev)
	}
	if o, ok := ev.Payload.(*event.Outcome); ok {
		s.netTotal(r, o) // net.go
		s.endRun(ev.Run, r, ev.Time, s.str(o.Outcome))
		return
	}
	if ev.Type != event.TypeRunStarted {
		s.atStep(r, ev)
	}
	switch p := ev.Payload.(type) {
	case *event.ModelTurn:
		s.modelCall(r, ev, p)
	case *event.Policy:
		denied := p.Effect == "deny"
		s.verdict(r, ev, p.Tool, denied, attribute.String(attrAct, s.str(p.Act)), attribute.String(attrTarget, s.str(p.Target)),
			attribute.String(attrEffect, s.str(p.Effect)), attribute.String(attrRule, s.str(p.Rule)),
			attribute.String(attrLayer, s.str(p.Layer)))
	case *event.Approval:
		if !p.Change { // the final change's approval is not a tool call's
			s.verdict(r, ev, p.Tool, p.Answer == "deny", attribute.String(attrAnswer, s.str(p.Answer)))
		}
	case *event.ToolCall:
		s.toolCall(r, ev, p)
	case *event.ToolResult:
		s.toolResult(r, ev, p)
	case *event.Verdict:
		s.checks(r, ev, p)
	case *event.NetConn:
		s.netConn(r, ev, p)
	}
	r.last = ev.Time
}

// startRun opens a run's span: under its parent's step for a sub-agent,
// under the caller's span when the run carries a traceparent, else a
// new trace. A run first seen after run_started (resumed) gets its span
// then.
func (s *state) startRun(ev event.Event) *runSpans {
	ctx := context.Background()
	started, _ := ev.Payload.(*event.RunStarted)
	if p := s.runs[ev.Parent]; ev.Parent != "" && p != nil {
		ctx = p.ctx
		if p.stepCtx != nil {
			ctx = p.stepCtx
		}
	} else if started != nil {
		ctx = remoteParent(ctx, s.str(started.Traceparent), s.str(started.Tracestate))
	}
	attrs := []attribute.KeyValue{
		attribute.String(attrOperation, opInvokeAgent), attribute.String(attrRunID, ev.Run), attribute.String(attrAgentID, ev.Run),
	}
	if ev.Parent != "" {
		attrs = append(attrs, attribute.String(attrParentRun, ev.Parent))
	}
	if started != nil {
		goal := s.str(started.Goal)
		if len(goal) > 200 {
			goal = goal[:200] + "…"
		}
		attrs = append(attrs, attribute.String(attrGoal, goal))
		if m := started.RunModel; m != nil && m.Provider != "" {
			attrs = append(attrs, attribute.String(attrProvider, s.str(m.Provider)))
		}
		if m := started.RunModel; m != nil && m.Model != "" {
			attrs = append(attrs, attribute.String(attrRequestModel, s.str(m.Model)))
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
func (s *state) atStep(r *runSpans, ev event.Event) {
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

func (s *state) modelCall(r *runSpans, ev event.Event, t *event.ModelTurn) {
	model := s.str(t.Model)
	attrs := []attribute.KeyValue{
		attribute.String(attrOperation, opChat), attribute.String(attrProvider, s.str(t.Provider)),
		attribute.String(attrResponseModel, model),
		attribute.Int64(attrInputTokens, t.InputTokens), attribute.Int64(attrOutputTokens, t.OutputTokens),
		attribute.Int64(attrCacheReadTokens, t.CacheReadTokens), attribute.Int64(attrCacheWriteTokens, t.CacheWriteTokens),
		attribute.String(attrCostSource, s.str(t.CostSource)),
	}
	if t.CostUSD != nil {
		attrs = append(attrs, attribute.Float64(attrCostUSD, *t.CostUSD))
	}
	_, span := s.e.tracer.Start(r.stepCtx, opChat+" "+model, oteltrace.WithTimestamp(r.last), oteltrace.WithAttributes(attrs...), oteltrace.WithSpanKind(oteltrace.SpanKindClient))
	span.End(oteltrace.WithTimestamp(ev.Time))
}

// verdict keeps a policy verdict or an approval for the call of tool it
// belongs to; a denied call never runs, so its span is recorded at once.
func (s *state) verdict(r *runSpans, ev event.Event, tool string, denied bool, attrs ...attribute.KeyValue) {
	tool = s.str(tool)
	if tool == "" {
		return
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

func (s *state) toolCall(r *runSpans, ev event.Event, c *event.ToolCall) {
	tool, id := s.str(c.Tool), s.str(c.ID)
	attrs := append([]attribute.KeyValue{
		attribute.String(attrOperation, opExecuteTool), attribute.String(attrToolName, tool), attribute.String(attrToolCallID, id),
	}, r.verdicts[tool]...)
	delete(r.verdicts, tool)
	_, span := s.e.tracer.Start(r.stepCtx, opExecuteTool+" "+tool, oteltrace.WithTimestamp(ev.Time), oteltrace.WithAttributes(attrs...))
	r.calls[id] = span
}

func (s *state) toolResult(r *runSpans, ev event.Event, res *event.ToolResult) {
	id := s.str(res.ID)
	span := r.calls[id]
	if span == nil {
		return
	}
	delete(r.calls, id)
	span.SetAttributes(attribute.Bool(attrToolError, res.IsError), attribute.Int64(attrResultBytes, int64(res.Bytes)))
	if res.IsError {
		span.SetStatus(codes.Error, "the tool reported an error")
	}
	span.End(oteltrace.WithTimestamp(ev.Time))
}

// checks records each check of a verification as a span ending at the
// event, as long as the check took.
func (s *state) checks(r *runSpans, ev event.Event, v *event.Verdict) {
	for _, c := range v.Checks {
		ms := c.DurationMS
		name := s.str(c.Name)
		_, span := s.e.tracer.Start(r.stepCtx, spanCheck+" "+name, oteltrace.WithTimestamp(ev.Time.Add(-time.Duration(ms)*time.Millisecond)),
			oteltrace.WithAttributes(attribute.String(attrCheckName, name), attribute.String(attrCheckPhase, s.str(c.Phase)),
				attribute.String(attrCheckBackend, s.str(c.Backend)), attribute.Int64(attrCheckExit, int64(c.ExitCode)),
				attribute.Bool(attrCheckPassed, c.Passed), attribute.Int64(attrCheckMillis, ms)))
		if !c.Passed && c.Phase != "red" {
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
