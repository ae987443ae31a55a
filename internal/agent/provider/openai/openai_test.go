package openai

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

const testKey = "sk-proj-PLANTED-9876543210"

func chunk(w io.Writer, data string) {
	fmt.Fprintf(w, "data: %s\n\n", data)
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
}

const head = `{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1730000000,"model":"gpt-5-2025-08-07","system_fingerprint":"fp_1",`

// toolTurn streams text and two tool calls whose arguments arrive in
// interleaved pieces, then the usage chunk and [DONE].
func toolTurn(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "text/event-stream")
	chunk(w, head+`"choices":[{"index":0,"delta":{"role":"assistant","content":"","refusal":null},"logprobs":null,"finish_reason":null}],"usage":null}`)
	chunk(w, head+`"choices":[{"index":0,"delta":{"content":"Looking "},"finish_reason":null}],"usage":null}`)
	chunk(w, head+`"choices":[{"index":0,"delta":{"content":"around."},"finish_reason":null}],"usage":null}`)
	chunk(w, head+`"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_A","type":"function","function":{"name":"grep","arguments":""}}]},"finish_reason":null}],"usage":null}`)
	chunk(w, head+`"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"pat"}}]},"finish_reason":null}],"usage":null}`)
	chunk(w, head+`"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"id":"call_B","type":"function","function":{"name":"read_file","arguments":""}}]},"finish_reason":null}],"usage":null}`)
	chunk(w, head+`"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"tern\": \"x\"}"}}]},"finish_reason":null}],"usage":null}`)
	chunk(w, head+`"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"function":{"arguments":"{\"path\": \"a.go\"}"}}]},"finish_reason":null}],"usage":null}`)
	chunk(w, head+`"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}],"usage":null}`)
	chunk(w, head+`"choices":[],"usage":{"prompt_tokens":1000,"completion_tokens":50,"total_tokens":1050,"prompt_tokens_details":{"cached_tokens":800,"audio_tokens":0},"completion_tokens_details":{"reasoning_tokens":10}}}`)
	chunk(w, `[DONE]`)
}

type captured struct {
	mu         sync.Mutex
	bodies     [][]byte
	keyHeaders [][]string
	headers    []http.Header
}

func server(t *testing.T, kind string, headers map[string]string, h func(w http.ResponseWriter, r *http.Request)) (*Provider, *captured) {
	t.Helper()
	var c captured
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/chat/completions" {
			http.Error(w, "wrong path "+r.URL.Path, http.StatusNotFound)
			return
		}
		body, _ := io.ReadAll(r.Body)
		var hs []string
		for name, vals := range r.Header {
			for _, v := range vals {
				if strings.Contains(v, testKey) {
					hs = append(hs, name+": "+v)
				}
			}
		}
		c.mu.Lock()
		c.bodies = append(c.bodies, body)
		c.keyHeaders = append(c.keyHeaders, hs)
		c.headers = append(c.headers, r.Header.Clone())
		c.mu.Unlock()
		h(w, r)
	}))
	t.Cleanup(srv.Close)
	return New(Config{Kind: kind, APIKey: testKey, BaseURL: srv.URL + "/v1/", Model: "gpt-5", HTTPClient: srv.Client(), Headers: headers}), &c
}

func transcript() *model.Request {
	return &model.Request{
		System:    "Be careful.",
		MaxTokens: 4096,
		Tools:     []model.ToolSpec{{Name: "grep", Description: "Search", Schema: json.RawMessage(`{"type":"object","properties":{"pattern":{"type":"string"}},"required":["pattern"]}`)}},
		Messages: []model.Message{
			{Role: model.RoleUser, Text: "Find it."},
			{Role: model.RoleAssistant, Text: "Searching.", ToolCalls: []model.ToolCall{
				{ID: "call_1", Name: "grep", Arguments: json.RawMessage(`{"pattern":"a"}`)},
				{ID: "call_2", Name: "grep", Arguments: json.RawMessage(`{"pattern":"b"}`)},
			}},
			{Role: model.RoleUser, ToolResults: []model.ToolResult{{CallID: "call_1", Content: "a.go:1:a"}, {CallID: "call_2", Content: "bad pattern", IsError: true}}},
		},
	}
}

func TestCompleteToolTurn(t *testing.T) {
	p, c := server(t, "openrouter", map[string]string{"X-Title": "ioh-lsp"}, func(w http.ResponseWriter, r *http.Request) { toolTurn(w) })
	got, err := p.Complete(context.Background(), transcript())
	if err != nil {
		t.Fatal(err)
	}
	want := &model.Response{
		Text: "Looking around.",
		ToolCalls: []model.ToolCall{
			{ID: "call_A", Name: "grep", Arguments: json.RawMessage(`{"pattern": "x"}`)},
			{ID: "call_B", Name: "read_file", Arguments: json.RawMessage(`{"path": "a.go"}`)},
		},
		Usage:      model.Usage{InputTokens: 200, OutputTokens: 50, CacheReadTokens: 800},
		StopReason: "tool_calls",
		Provider:   "openrouter",
		Model:      "gpt-5-2025-08-07",
	}
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("response (-got +want):\n%s", diff)
	}
	if diff := cmp.Diff(c.keyHeaders, [][]string{{"Authorization: Bearer " + testKey}}); diff != "" {
		t.Errorf("headers carrying the key (-got +want):\n%s", diff)
	}
	if got := c.headers[0].Get("X-Title"); got != "ioh-lsp" {
		t.Errorf("X-Title = %q, want the extra header", got)
	}
	if strings.Contains(string(c.bodies[0]), testKey) {
		t.Error("the API key appears in the request body")
	}
	var body map[string]any
	if err := json.Unmarshal(c.bodies[0], &body); err != nil {
		t.Fatal(err)
	}
	wantBody := map[string]any{
		"model":                 "gpt-5",
		"stream":                true,
		"stream_options":        map[string]any{"include_usage": true},
		"max_completion_tokens": 4096.0,
		"tools": []any{map[string]any{"type": "function", "function": map[string]any{
			"name": "grep", "description": "Search",
			"parameters": map[string]any{"type": "object", "properties": map[string]any{"pattern": map[string]any{"type": "string"}}, "required": []any{"pattern"}},
		}}},
		"messages": []any{
			map[string]any{"role": "system", "content": "Be careful."},
			map[string]any{"role": "user", "content": "Find it."},
			map[string]any{"role": "assistant", "content": "Searching.", "tool_calls": []any{
				map[string]any{"id": "call_1", "type": "function", "function": map[string]any{"name": "grep", "arguments": `{"pattern":"a"}`}},
				map[string]any{"id": "call_2", "type": "function", "function": map[string]any{"name": "grep", "arguments": `{"pattern":"b"}`}},
			}},
			map[string]any{"role": "tool", "tool_call_id": "call_1", "content": "a.go:1:a"},
			map[string]any{"role": "tool", "tool_call_id": "call_2", "content": "error: bad pattern"},
		},
	}
	if diff := cmp.Diff(body, wantBody); diff != "" {
		t.Errorf("request body (-got +want):\n%s", diff)
	}
}

func TestCompleteFaults(t *testing.T) {
	jsonErr := func(status int, body string, hdr ...string) func(w http.ResponseWriter, r *http.Request) {
		return func(w http.ResponseWriter, r *http.Request) {
			for i := 0; i+1 < len(hdr); i += 2 {
				w.Header().Set(hdr[i], hdr[i+1])
			}
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(status)
			io.WriteString(w, body)
		}
	}
	tests := []struct {
		name       string
		handler    func(w http.ResponseWriter, r *http.Request)
		timeout    time.Duration
		wantClass  model.Class
		wantStatus int
		wantAfter  time.Duration
	}{
		{"429 with Retry-After", jsonErr(429, `{"error":{"message":"Rate limit reached","type":"requests","param":null,"code":"rate_limit_exceeded"}}`, "Retry-After", "3"),
			0, model.ClassRateLimited, 429, 3 * time.Second},
		{"503", jsonErr(503, `{"error":{"message":"The server is overloaded","type":"server_error","param":null,"code":null}}`),
			0, model.ClassServer, 503, 0},
		{"502 with an HTML body", jsonErr(502, `<html>bad gateway</html>`),
			0, model.ClassServer, 502, 0},
		{"401", jsonErr(401, `{"error":{"message":"Incorrect API key provided: sk-proj-PLANTED-9876543210.","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}`),
			0, model.ClassAuth, 401, 0},
		{"context length", jsonErr(400, `{"error":{"message":"This model's maximum context length is 128000 tokens.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}`),
			0, model.ClassContextOverflow, 400, 0},
		{"bad request", jsonErr(400, `{"error":{"message":"Invalid value for 'tools'.","type":"invalid_request_error","param":"tools","code":null}}`),
			0, model.ClassRequest, 400, 0},
		{"hung response", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			chunk(w, head+`"choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}],"usage":null}`)
			<-r.Context().Done()
		}, 50 * time.Millisecond, model.ClassTimeout, 200, 0},
		{"stream cut mid-way", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			chunk(w, head+`"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_A","type":"function","function":{"name":"grep","arguments":"{\"pa"}}]},"finish_reason":null}],"usage":null}`)
		}, 0, model.ClassTransport, 200, 0},
		{"malformed JSON chunk", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			chunk(w, head+`"choices":[{"index":0,"delta":{"content":"x"}`)
		}, 0, model.ClassMalformed, 200, 0},
		{"truncated tool arguments", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			chunk(w, head+`"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_A","type":"function","function":{"name":"grep","arguments":"{\"pa"}}]},"finish_reason":null}],"usage":null}`)
			chunk(w, head+`"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}],"usage":null}`)
			chunk(w, `[DONE]`)
		}, 0, model.ClassMalformed, 0, 0},
		{"error object in the stream", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			chunk(w, `{"error":{"message":"The server had an error while processing your request.","type":"server_error","param":null,"code":null}}`)
		}, 0, model.ClassServer, 200, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, _ := server(t, "openai", nil, tt.handler)
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
			want := []any{tt.wantClass, tt.wantStatus, tt.wantAfter, "openai"}
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

func TestOpenRouterCacheControl(t *testing.T) {
	tests := []struct {
		model string
		want  any
	}{
		{"anthropic/claude-sonnet-4.6", map[string]any{"type": "ephemeral"}},
		{"openai/gpt-5", nil},
	}
	for _, tt := range tests {
		t.Run(tt.model, func(t *testing.T) {
			var c captured
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				body, _ := io.ReadAll(r.Body)
				c.mu.Lock()
				c.bodies = append(c.bodies, body)
				c.mu.Unlock()
				toolTurn(w)
			}))
			defer srv.Close()
			p := New(Config{Kind: "openrouter", APIKey: testKey, BaseURL: srv.URL, Model: tt.model, HTTPClient: srv.Client(), CacheControl: true})
			if _, err := p.Complete(context.Background(), transcript()); err != nil {
				t.Fatal(err)
			}
			var body map[string]any
			if err := json.Unmarshal(c.bodies[0], &body); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(body["cache_control"], tt.want); diff != "" {
				t.Errorf("cache_control (-got +want):\n%s", diff)
			}
			if body["model"] != tt.model || body["stream"] != true {
				t.Errorf("rewritten body lost fields: model %v stream %v", body["model"], body["stream"])
			}
		})
	}
}
