package openai

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/ioh-lsp/ioh-lsp/internal/agent/model"
)

const orHead = `{"id":"gen-1764500000-abc","provider":"Anthropic","model":"anthropic/claude-sonnet-4.6","object":"chat.completion.chunk","created":1764500000,`

// openRouterTurn streams a tool call the way OpenRouter does with usage
// accounting: a processing comment, deltas, the finish chunk, then a
// final chunk with empty choices whose usage carries the charge.
func openRouterTurn(w http.ResponseWriter, usage string) {
	w.Header().Set("Content-Type", "text/event-stream")
	io.WriteString(w, ": OPENROUTER PROCESSING\n\n")
	chunk(w, orHead+`"choices":[{"index":0,"delta":{"role":"assistant","content":"Reading."},"finish_reason":null,"native_finish_reason":null,"logprobs":null}]}`)
	chunk(w, orHead+`"choices":[{"index":0,"delta":{"role":"assistant","content":"","tool_calls":[{"index":0,"id":"toolu_1","type":"function","function":{"name":"read_file","arguments":"{\"path\":\"a.go\"}"}}]},"finish_reason":null,"native_finish_reason":null,"logprobs":null}]}`)
	chunk(w, orHead+`"choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":"tool_calls","native_finish_reason":"tool_use","logprobs":null}]}`)
	chunk(w, orHead+`"choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null,"native_finish_reason":null,"logprobs":null}],"usage":`+usage+`}`)
	chunk(w, `[DONE]`)
}

type orServer struct {
	mu     sync.Mutex
	bodies []map[string]any
}

func newOpenRouter(t *testing.T, kind string, report bool, usage string) (*Provider, *orServer) {
	t.Helper()
	var s orServer
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body map[string]any
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		s.mu.Lock()
		s.bodies = append(s.bodies, body)
		s.mu.Unlock()
		openRouterTurn(w, usage)
	}))
	t.Cleanup(srv.Close)
	p := New(Config{Kind: kind, APIKey: testKey, BaseURL: srv.URL + "/v1", Model: "anthropic/claude-sonnet-4.6",
		HTTPClient: srv.Client(), CacheControl: true, ReportCost: report})
	return p, &s
}

// TestOpenRouterReportedCost: with usage accounting asked for, the charge
// OpenRouter reports in the final chunk becomes the response's cost, and
// the request asks for it with usage.include (next to cache_control).
func TestOpenRouterReportedCost(t *testing.T) {
	const usage = `{"prompt_tokens":1200,"completion_tokens":40,"total_tokens":1240,"cost":0.0042,"is_byok":false,` +
		`"prompt_tokens_details":{"cached_tokens":200,"audio_tokens":0},"cost_details":{"upstream_inference_cost":null},"completion_tokens_details":{"reasoning_tokens":0}}`
	p, s := newOpenRouter(t, "openrouter", true, usage)
	if !p.ReportsCost() {
		t.Fatal("an OpenRouter provider says it reports no cost")
	}
	resp, err := p.Complete(context.Background(), transcript())
	if err != nil {
		t.Fatal(err)
	}
	if resp.CostUSD == nil || *resp.CostUSD != 0.0042 {
		t.Errorf("CostUSD = %v, want the reported 0.0042", resp.CostUSD)
	}
	if want := (model.Usage{InputTokens: 1000, OutputTokens: 40, CacheReadTokens: 200}); resp.Usage != want {
		t.Errorf("usage = %+v, want %+v", resp.Usage, want)
	}
	if len(resp.ToolCalls) != 1 || resp.ToolCalls[0].Name != "read_file" {
		t.Errorf("tool calls = %+v", resp.ToolCalls)
	}
	body := s.bodies[0]
	if u, _ := body["usage"].(map[string]any); u["include"] != true {
		t.Errorf("request usage = %v, want {include: true}", body["usage"])
	}
	if cc, _ := body["cache_control"].(map[string]any); cc["type"] != "ephemeral" {
		t.Errorf("request lost cache_control: %v", body["cache_control"])
	}
	if so, _ := body["stream_options"].(map[string]any); so["include_usage"] != true {
		t.Errorf("stream_options = %v", body["stream_options"])
	}
}

// TestOpenRouterBYOKCost: with the user's own upstream key, the charge is
// OpenRouter's fee plus the upstream inference cost.
func TestOpenRouterBYOKCost(t *testing.T) {
	const usage = `{"prompt_tokens":100,"completion_tokens":10,"total_tokens":110,"cost":0.0001,"is_byok":true,"cost_details":{"upstream_inference_cost":0.002}}`
	p, _ := newOpenRouter(t, "openrouter", true, usage)
	resp, err := p.Complete(context.Background(), transcript())
	if err != nil {
		t.Fatal(err)
	}
	if resp.CostUSD == nil || *resp.CostUSD < 0.0021-1e-12 || *resp.CostUSD > 0.0021+1e-12 {
		t.Errorf("CostUSD = %v, want fee + upstream = 0.0021", resp.CostUSD)
	}
}

// TestNoCostWithoutAccounting: a provider not configured to report cost
// neither asks for usage accounting nor trusts a cost in the stream (an
// OpenAI-compatible server's figure is not a charge), and a stream without
// a cost leaves it unset.
func TestNoCostWithoutAccounting(t *testing.T) {
	p, s := newOpenRouter(t, "openai-compatible", false, `{"prompt_tokens":100,"completion_tokens":10,"total_tokens":110,"cost":9.99}`)
	if p.ReportsCost() {
		t.Error("openai-compatible says it reports cost")
	}
	resp, err := p.Complete(context.Background(), transcript())
	if err != nil {
		t.Fatal(err)
	}
	if resp.CostUSD != nil {
		t.Errorf("CostUSD = %v from a provider not asked to report it", *resp.CostUSD)
	}
	if _, ok := s.bodies[0]["usage"]; ok {
		t.Error("asked for usage accounting")
	}
	p2, _ := newOpenRouter(t, "openrouter", true, `{"prompt_tokens":100,"completion_tokens":10,"total_tokens":110}`)
	resp, err = p2.Complete(context.Background(), transcript())
	if err != nil {
		t.Fatal(err)
	}
	if resp.CostUSD != nil {
		t.Errorf("CostUSD = %v from a stream that reported none", *resp.CostUSD)
	}
	if strings.Contains(resp.Text, "OPENROUTER") {
		t.Error("the processing comment reached the text")
	}
}
