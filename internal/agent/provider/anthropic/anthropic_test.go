package anthropic

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/ioh-lsp/ioh-lsp/internal/agent/model"
)

const testKey = "sk-ant-test-PLANTED-0123456789"

// event writes one SSE event in the Messages streaming format.
func event(w io.Writer, typ, data string) {
	fmt.Fprintf(w, "event: %s\ndata: %s\n\n", typ, data)
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
}

// toolTurn is a complete streamed turn: text, then a tool_use whose input
// arrives in three input_json_delta pieces, with cache usage.
func toolTurn(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "text/event-stream")
	event(w, "message_start", `{"type":"message_start","message":{"id":"msg_01","type":"message","role":"assistant","content":[],"model":"claude-sonnet-4-6","stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":25,"output_tokens":1,"cache_creation_input_tokens":1200,"cache_read_input_tokens":3400}}}`)
	event(w, "content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`)
	event(w, "ping", `{"type":"ping"}`)
	event(w, "content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Looking at "}}`)
	event(w, "content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"the parser."}}`)
	event(w, "content_block_stop", `{"type":"content_block_stop","index":0}`)
	event(w, "content_block_start", `{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_01A","name":"grep","input":{}}}`)
	event(w, "content_block_delta", `{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":""}}`)
	event(w, "content_block_delta", `{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"pattern\": \"func Par"}}`)
	event(w, "content_block_delta", `{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"seDuration\"}"}}`)
	event(w, "content_block_stop", `{"type":"content_block_stop","index":1}`)
	event(w, "message_delta", `{"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":57}}`)
	event(w, "message_stop", `{"type":"message_stop"}`)
}

type captured struct {
	mu     sync.Mutex
	bodies [][]byte
	// keyHeaders lists, per request, the headers whose value holds the key.
	keyHeaders [][]string
}

func (c *captured) record(r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.bodies = append(c.bodies, body)
	var hs []string
	for name, vals := range r.Header {
		for _, v := range vals {
			if strings.Contains(v, testKey) {
				hs = append(hs, name+": "+v)
			}
		}
	}
	c.keyHeaders = append(c.keyHeaders, hs)
}

func server(t *testing.T, h func(w http.ResponseWriter, r *http.Request)) (*Provider, *captured) {
	t.Helper()
	var c captured
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/messages" {
			http.Error(w, "wrong path "+r.URL.Path, http.StatusNotFound)
			return
		}
		c.record(r)
		h(w, r)
	}))
	t.Cleanup(srv.Close)
	return New(Config{APIKey: testKey, BaseURL: srv.URL, Model: "claude-sonnet-4-6", HTTPClient: srv.Client()}), &c
}

func transcript() *model.Request {
	return &model.Request{
		System: "You are a careful engineer.",
		Tools: []model.ToolSpec{
			{Name: "read_file", Description: "Read a file", Schema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`)},
			{Name: "grep", Description: "Search", Schema: json.RawMessage(`{"type":"object","properties":{"pattern":{"type":"string"}},"required":["pattern"],"additionalProperties":false}`)},
		},
		Messages: []model.Message{
			{Role: model.RoleUser, Text: "Make ParseDuration accept days."},
			{Role: model.RoleAssistant, Text: "Reading.", ToolCalls: []model.ToolCall{{ID: "toolu_00", Name: "read_file", Arguments: json.RawMessage(`{"path":"time/format.go"}`)}}},
			{Role: model.RoleUser, ToolResults: []model.ToolResult{{CallID: "toolu_00", Content: "package time", IsError: false}}},
			{Role: model.RoleAssistant, ToolCalls: []model.ToolCall{{ID: "toolu_0b", Name: "read_file", Arguments: json.RawMessage(`{"path":"nope.go"}`)}}},
			{Role: model.RoleUser, ToolResults: []model.ToolResult{{CallID: "toolu_0b", Content: "no such file", IsError: true}}},
		},
	}
}

func TestCompleteToolTurn(t *testing.T) {
	p, c := server(t, func(w http.ResponseWriter, r *http.Request) { toolTurn(w) })
	got, err := p.Complete(context.Background(), transcript())
	if err != nil {
		t.Fatal(err)
	}
	want := &model.Response{
		Text:       "Looking at the parser.",
		ToolCalls:  []model.ToolCall{{ID: "toolu_01A", Name: "grep", Arguments: json.RawMessage(`{"pattern": "func ParseDuration"}`)}},
		Usage:      model.Usage{InputTokens: 25, OutputTokens: 57, CacheReadTokens: 3400, CacheWriteTokens: 1200},
		StopReason: "tool_use",
		Provider:   "anthropic",
		Model:      "claude-sonnet-4-6",
	}
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("response (-got +want):\n%s", diff)
	}
	// The SDK (v2.15.0) sends the key as a bearer token, and nowhere else.
	if diff := cmp.Diff(c.keyHeaders, [][]string{{"Authorization: Bearer " + testKey}}); diff != "" {
		t.Errorf("headers carrying the key (-got +want):\n%s", diff)
	}
	if strings.Contains(string(c.bodies[0]), testKey) {
		t.Error("the API key appears in the request body")
	}
	var body struct {
		Model     string `json:"model"`
		MaxTokens int    `json:"max_tokens"`
		Stream    bool   `json:"stream"`
		System    []struct {
			Text         string          `json:"text"`
			CacheControl json.RawMessage `json:"cache_control"`
		} `json:"system"`
		Tools []struct {
			Name         string          `json:"name"`
			InputSchema  json.RawMessage `json:"input_schema"`
			CacheControl json.RawMessage `json:"cache_control"`
		} `json:"tools"`
		Messages []struct {
			Role    string           `json:"role"`
			Content []map[string]any `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(c.bodies[0], &body); err != nil {
		t.Fatalf("decode request body: %v\n%s", err, c.bodies[0])
	}
	if body.Model != "claude-sonnet-4-6" || body.MaxTokens != DefaultMaxTokens || !body.Stream {
		t.Errorf("model/max_tokens/stream = %q/%d/%v", body.Model, body.MaxTokens, body.Stream)
	}
	eph := `{"type":"ephemeral"}`
	if len(body.System) != 1 || string(body.System[0].CacheControl) != eph {
		t.Errorf("system = %+v, want one block with cache_control", body.System)
	}
	if len(body.Tools) != 2 || body.Tools[0].CacheControl != nil || string(body.Tools[1].CacheControl) != eph {
		t.Errorf("tools cache_control = %s / %s, want only the last tool marked", body.Tools[0].CacheControl, body.Tools[1].CacheControl)
	}
	var schema map[string]any
	if err := json.Unmarshal(body.Tools[1].InputSchema, &schema); err != nil || schema["additionalProperties"] != false || schema["type"] != "object" {
		t.Errorf("grep input_schema = %s", body.Tools[1].InputSchema)
	}
	// Native blocks, and cache breakpoints on the previous request's last
	// message (index 2) and the newest one (index 4) only.
	type blk struct {
		Role, Type, ID string
		Cached, Error  bool
	}
	var blocks []blk
	for _, m := range body.Messages {
		for _, b := range m.Content {
			id, _ := b["id"].(string)
			if tid, ok := b["tool_use_id"].(string); ok {
				id = tid
			}
			isErr, _ := b["is_error"].(bool)
			blocks = append(blocks, blk{Role: m.Role, Type: b["type"].(string), ID: id, Cached: b["cache_control"] != nil, Error: isErr})
		}
	}
	wantBlocks := []blk{
		{Role: "user", Type: "text"},
		{Role: "assistant", Type: "text"},
		{Role: "assistant", Type: "tool_use", ID: "toolu_00"},
		{Role: "user", Type: "tool_result", ID: "toolu_00", Cached: true},
		{Role: "assistant", Type: "tool_use", ID: "toolu_0b"},
		{Role: "user", Type: "tool_result", ID: "toolu_0b", Cached: true, Error: true},
	}
	if diff := cmp.Diff(blocks, wantBlocks); diff != "" {
		t.Errorf("message blocks (-got +want):\n%s", diff)
	}
}

func TestCompleteFaults(t *testing.T) {
	tests := []struct {
		name       string
		handler    func(w http.ResponseWriter, r *http.Request)
		timeout    time.Duration
		wantClass  model.Class
		wantStatus int
		wantAfter  time.Duration
	}{
		{"429 with Retry-After", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Retry-After", "7")
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusTooManyRequests)
			io.WriteString(w, `{"type":"error","error":{"type":"rate_limit_error","message":"Number of request tokens has exceeded your per-minute rate limit"}}`)
		}, 0, model.ClassRateLimited, 429, 7 * time.Second},
		{"503", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusServiceUnavailable)
			io.WriteString(w, `{"type":"error","error":{"type":"api_error","message":"unavailable"}}`)
		}, 0, model.ClassServer, 503, 0},
		{"529 overloaded", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(529)
			io.WriteString(w, `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`)
		}, 0, model.ClassServer, 529, 0},
		{"401", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnauthorized)
			io.WriteString(w, `{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}`)
		}, 0, model.ClassAuth, 401, 0},
		{"400 prompt too long", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			io.WriteString(w, `{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 210000 tokens > 200000 maximum"}}`)
		}, 0, model.ClassContextOverflow, 400, 0},
		{"400 bad request", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			io.WriteString(w, `{"type":"error","error":{"type":"invalid_request_error","message":"messages: roles must alternate"}}`)
		}, 0, model.ClassRequest, 400, 0},
		{"hung response", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			event(w, "message_start", `{"type":"message_start","message":{"id":"m","type":"message","role":"assistant","content":[],"model":"claude-sonnet-4-6","usage":{"input_tokens":1,"output_tokens":1}}}`)
			<-r.Context().Done()
		}, 50 * time.Millisecond, model.ClassTimeout, 200, 0},
		{"stream cut mid-way", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			event(w, "message_start", `{"type":"message_start","message":{"id":"m","type":"message","role":"assistant","content":[],"model":"claude-sonnet-4-6","usage":{"input_tokens":1,"output_tokens":1}}}`)
			event(w, "content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`)
			io.WriteString(w, "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"ind")
		}, 0, model.ClassTransport, 200, 0},
		{"malformed JSON event", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			event(w, "message_start", `{"type":"message_start","message":{"id":"m","type":"message","role":"assistant","content":[],"model":"claude-sonnet-4-6","usage":{"input_tokens":1,"output_tokens":1}}}`)
			event(w, "content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`)
			event(w, "content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"oops}}`)
		}, 0, model.ClassMalformed, 200, 0},
		{"error event mid-stream", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			event(w, "message_start", `{"type":"message_start","message":{"id":"m","type":"message","role":"assistant","content":[],"model":"claude-sonnet-4-6","usage":{"input_tokens":1,"output_tokens":1}}}`)
			event(w, "error", `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`)
		}, 0, model.ClassServer, 200, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, _ := server(t, tt.handler)
			ctx := context.Background()
			if tt.timeout > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, tt.timeout)
				defer cancel()
			}
			_, err := p.Complete(ctx, transcript())
			var me *model.Error
			if !errors.As(err, &me) {
				t.Fatalf("error %v (%T) is not a *model.Error", err, err)
			}
			got := []any{me.Class, me.Status, me.RetryAfter, me.Provider}
			want := []any{tt.wantClass, tt.wantStatus, tt.wantAfter, "anthropic"}
			if diff := cmp.Diff(got, want); diff != "" {
				t.Errorf("class/status/retry-after/provider (-got +want):\n%s\nerror: %v", diff, err)
			}
			t.Logf("%v", err)
			if strings.Contains(err.Error(), testKey) {
				t.Errorf("the API key appears in the error: %v", err)
			}
		})
	}
}

// TestIgnoresSDKEnvironment checks that the SDK's own environment
// variables cannot redirect requests or swap the key.
func TestIgnoresSDKEnvironment(t *testing.T) {
	t.Setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:1")
	t.Setenv("ANTHROPIC_API_KEY", "sk-from-the-environment")
	t.Setenv("ANTHROPIC_AUTH_TOKEN", "tok-from-the-environment")
	t.Setenv("ANTHROPIC_CUSTOM_HEADERS", "X-Leak: yes")
	p, c := server(t, func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Leak") != "" {
			http.Error(w, "custom header from the environment", http.StatusBadRequest)
			return
		}
		toolTurn(w)
	})
	if _, err := p.Complete(context.Background(), transcript()); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(c.keyHeaders, [][]string{{"Authorization: Bearer " + testKey}}); diff != "" {
		t.Errorf("headers carrying the key (-got +want):\n%s", diff)
	}
}
