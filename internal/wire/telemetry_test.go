package wire

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	coltrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/ioh-lsp/ioh-lsp/internal/agent"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/contract"
)

// otlpReceiver is an OTLP/HTTP collector: it decodes each protobuf
// export request and keeps the spans and the raw bodies.
type otlpReceiver struct {
	mu     sync.Mutex
	spans  []*tracepb.Span
	bodies [][]byte
	paths  []string
}

func (rc *otlpReceiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var body io.Reader = r.Body
	if r.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(r.Body)
		if err != nil {
			http.Error(w, err.Error(), 400)
			return
		}
		body = zr
	}
	b, err := io.ReadAll(body)
	if err != nil || r.Header.Get("Content-Type") != "application/x-protobuf" {
		http.Error(w, fmt.Sprintf("bad request: %v %s", err, r.Header.Get("Content-Type")), 400)
		return
	}
	var req coltrace.ExportTraceServiceRequest
	if err := proto.Unmarshal(b, &req); err != nil {
		http.Error(w, err.Error(), 400)
		return
	}
	rc.mu.Lock()
	rc.bodies = append(rc.bodies, b)
	rc.paths = append(rc.paths, r.URL.Path)
	for _, rs := range req.ResourceSpans {
		for _, ss := range rs.ScopeSpans {
			rc.spans = append(rc.spans, ss.Spans...)
		}
	}
	rc.mu.Unlock()
	out, _ := proto.Marshal(&coltrace.ExportTraceServiceResponse{})
	w.Header().Set("Content-Type", "application/x-protobuf")
	w.Write(out)
}

func attr(s *tracepb.Span, key string) *commonpb.AnyValue {
	for _, kv := range s.Attributes {
		if kv.Key == key {
			return kv.Value
		}
	}
	return nil
}

func attrStr(s *tracepb.Span, key string) string {
	if v := attr(s, key); v != nil {
		return v.GetStringValue()
	}
	return ""
}

// TestTelemetryExportsRunsAsTraces runs a replay run (a sub-agent, a
// denied write, a verification check) with telemetry.otlp_endpoint set
// to an OTLP receiver, and checks the span tree, the attributes, the
// caller's trace context, and that a planted key is nowhere in what was
// sent.
func TestTelemetryExportsRunsAsTraces(t *testing.T) {
	rc := &otlpReceiver{}
	collector := httptest.NewServer(rc)
	defer collector.Close()
	const planted = "sk-planted-7f3a9c0d1e2b"
	ws := t.TempDir()
	os.WriteFile(filepath.Join(ws, "a.txt"), []byte("x\n"), 0o644)
	cfgHome := t.TempDir()
	os.MkdirAll(filepath.Join(cfgHome, "ioh"), 0o755)
	os.WriteFile(filepath.Join(cfgHome, "ioh", "config.yaml"), []byte("telemetry:\n  otlp_endpoint: "+collector.URL+"\n"), 0o644)
	cassette := filepath.Join(ws, "c.json")
	os.WriteFile(cassette, []byte(`{"version":1,"turns":[
		{"text":"the key is `+planted+`","tool_calls":[{"name":"read_file","arguments":{"path":"a.txt"}}],"usage":{"input_tokens":1200,"output_tokens":40,"cache_read_tokens":800}},
		{"tool_calls":[{"name":"write_file","arguments":{"path":".git/config","content":"`+planted+`"}}]},
		{"tool_calls":[{"name":"spawn_agent","arguments":{"goal":"sub task"}}]},
		{"tool_calls":[{"name":"write_file","arguments":{"path":"a.txt","content":"y\n"}}]},
		{"tool_calls":[{"name":"finish","arguments":{"summary":"done"}}]}],
	 "children":{"sub task":[{"tool_calls":[{"name":"finish","arguments":{"summary":"sub done"}}]}]}}`), 0o644)
	env := map[string]string{"IOH_STATE_DIR": t.TempDir(), "HOME": t.TempDir(), "XDG_CONFIG_HOME": cfgHome, "PATH": os.Getenv("PATH"), "MY_API_KEY": planted}
	ctx := mcpCtx(t)
	eng, err := NewHarness(ctx, Options{
		Root: ws, Getenv: func(k string) string { return env[k] }, Environ: func() []string { return []string{"MY_API_KEY=" + planted} },
		Overrides: Overrides{Cassette: cassette}, Approver: applyAll{},
	})
	if err != nil {
		t.Fatal(err)
	}
	const caller = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	rctx := agent.WithTraceContext(ctx, agent.TraceContext{Traceparent: caller})
	run, err := eng.Harness.Start(rctx, &contract.Contract{Version: 1, Goal: "fix it with " + planted, Retry: contract.DefaultRetry(),
		Verify: contract.Verify{Checks: []contract.Check{{Name: "unit", Run: []string{"true"}}}}})
	if err != nil {
		t.Fatal(err)
	}
	res := run.Wait()
	eng.Close() // flushes the exporter
	if res.Outcome != agent.OutcomeApplied {
		t.Fatalf("outcome %s (%v)", res.Outcome, res.Err)
	}
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if len(rc.spans) == 0 {
		t.Fatal("the receiver got no spans")
	}
	for _, p := range rc.paths {
		if p != "/v1/traces" {
			t.Errorf("exported to %s, want /v1/traces", p)
		}
	}
	for _, b := range rc.bodies {
		if bytes.Contains(b, []byte(planted)) {
			t.Fatal("the planted key is in an export request")
		}
	}
	byID := map[string]*tracepb.Span{}
	var roots, subs, models, checks []*tracepb.Span
	tools := map[string]*tracepb.Span{}
	for _, s := range rc.spans {
		byID[string(s.SpanId)] = s
		switch {
		case s.Name == "invoke_agent ioh-lsp" && attrStr(s, "ioh.run.parent") == "":
			roots = append(roots, s)
		case s.Name == "invoke_agent ioh-lsp":
			subs = append(subs, s)
		case strings.HasPrefix(s.Name, "chat "):
			models = append(models, s)
		case strings.HasPrefix(s.Name, "check "):
			checks = append(checks, s)
		case strings.HasPrefix(s.Name, "execute_tool "):
			tools[s.Name+" "+attrStr(s, "ioh.policy.target")] = s
		}
	}
	if len(roots) != 1 || len(subs) != 1 {
		t.Fatalf("%d root run spans and %d sub-agent spans, want 1 and 1", len(roots), len(subs))
	}
	root := roots[0]
	if fmt.Sprintf("%x", root.TraceId) != "4bf92f3577b34da6a3ce929d0e0e4736" || fmt.Sprintf("%x", root.ParentSpanId) != "00f067aa0ba902b7" {
		t.Errorf("root run span in trace %x under %x; want the caller's traceparent", root.TraceId, root.ParentSpanId)
	}
	if got := attrStr(root, "ioh.run.outcome"); got != "applied" {
		t.Errorf("root outcome attribute %q", got)
	}
	// ancestors walks a span's parents within the export.
	under := func(s, anc *tracepb.Span) bool {
		for p := byID[string(s.ParentSpanId)]; p != nil; p = byID[string(p.ParentSpanId)] {
			if p == anc {
				return true
			}
		}
		return false
	}
	if !under(subs[0], root) {
		t.Error("the sub-agent's run span is not under the root run")
	}
	for _, s := range rc.spans {
		if s != root && !bytes.Equal(s.TraceId, root.TraceId) {
			t.Errorf("span %q is in another trace", s.Name)
		}
	}
	if len(models) != 6 {
		t.Errorf("%d model call spans, want 6 (5 root turns, 1 sub-agent turn)", len(models))
	}
	m := models[0]
	for _, s := range models {
		if attr(s, "gen_ai.usage.input_tokens").GetIntValue() == 1200 {
			m = s
		}
	}
	if attr(m, "gen_ai.usage.input_tokens").GetIntValue() != 1200 || attr(m, "gen_ai.usage.output_tokens").GetIntValue() != 40 ||
		attr(m, "gen_ai.usage.cache_read.input_tokens").GetIntValue() != 800 || attrStr(m, "gen_ai.provider.name") == "" {
		t.Errorf("model span attributes: %v", m.Attributes)
	}
	if p := byID[string(m.ParentSpanId)]; p == nil || !strings.HasPrefix(p.Name, "step ") || !under(m, root) {
		t.Errorf("a model call span is not under a step of the run")
	}
	denied := tools["execute_tool write_file .git/config"]
	if denied == nil || attrStr(denied, "ioh.policy.effect") != "deny" || attrStr(denied, "ioh.policy.layer") != "builtin" ||
		attrStr(denied, "ioh.policy.rule") != "deny write .git/**" || denied.Status.GetCode() != tracepb.Status_STATUS_CODE_ERROR {
		t.Errorf("denied write span: %+v", denied)
	}
	read := tools["execute_tool read_file a.txt"]
	if read == nil || attrStr(read, "ioh.policy.act") != "read" || attrStr(read, "ioh.policy.effect") != "allow" || attrStr(read, "gen_ai.tool.call.id") == "" {
		t.Errorf("read span: %+v", read)
	}
	if len(checks) == 0 {
		t.Fatal("no check span")
	}
	c := checks[len(checks)-1]
	if attrStr(c, "ioh.check.name") != "unit" || attrStr(c, "ioh.check.backend") == "" || !attr(c, "ioh.check.passed").GetBoolValue() || attr(c, "ioh.check.exit_code") == nil {
		t.Errorf("check span attributes: %v", c.Attributes)
	}
}

// TestTelemetryOffByDefault: with no endpoint configured, nothing is
// exported, whatever runs.
func TestTelemetryOffByDefault(t *testing.T) {
	rc := &otlpReceiver{}
	collector := httptest.NewServer(rc)
	defer collector.Close()
	// OTEL_* variables do not switch it on either.
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", collector.URL)
	t.Setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", collector.URL+"/v1/traces")
	ws := t.TempDir()
	cassette := filepath.Join(ws, "c.json")
	os.WriteFile(cassette, []byte(`{"version":1,"turns":[{"tool_calls":[{"name":"finish","arguments":{"summary":"s"}}]}]}`), 0o644)
	env := map[string]string{"IOH_STATE_DIR": t.TempDir(), "HOME": t.TempDir(), "XDG_CONFIG_HOME": t.TempDir()}
	eng, err := NewHarness(context.Background(), Options{
		Root: ws, Getenv: func(k string) string { return env[k] }, Environ: func() []string { return nil },
		Overrides: Overrides{Cassette: cassette}, Approver: applyAll{},
	})
	if err != nil {
		t.Fatal(err)
	}
	run, err := eng.Harness.Start(mcpCtx(t), &contract.Contract{Version: 1, Goal: "g", Retry: contract.DefaultRetry()})
	if err != nil {
		t.Fatal(err)
	}
	run.Wait()
	eng.Close()
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if len(rc.bodies) != 0 {
		t.Fatalf("%d export requests with no endpoint configured", len(rc.bodies))
	}
}
