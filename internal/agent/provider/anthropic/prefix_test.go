package anthropic

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/ioh-lsp/ioh-lsp/internal/agent/model"
)

// TestCacheablePrefix replays a 30-step transcript through the adapter and
// checks, on the bodies actually sent, that each request after the first
// starts with the whole previous request (whose end carries a cache
// breakpoint, so the API can serve it from the prompt cache) and that this
// prefix is most of the request.
func TestCacheablePrefix(t *testing.T) {
	p, c := server(t, func(w http.ResponseWriter, r *http.Request) { toolTurn(w) })
	req := &model.Request{
		System:   strings.Repeat("You are a careful engineer. ", 80),
		Tools:    transcript().Tools,
		Messages: []model.Message{{Role: model.RoleUser, Text: "Make ParseDuration accept days."}},
	}
	const steps = 30
	for i := 0; i < steps; i++ {
		resp, err := p.Complete(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		id := fmt.Sprintf("toolu_%02d", i)
		req.Messages = append(req.Messages,
			model.Message{Role: model.RoleAssistant, Text: resp.Text, ToolCalls: []model.ToolCall{{ID: id, Name: "grep", Arguments: resp.ToolCalls[0].Arguments}}},
			model.Message{Role: model.RoleUser, ToolResults: []model.ToolResult{{CallID: id, Content: strings.Repeat(fmt.Sprintf("a.go:%d: match\n", i), 20)}}})
	}
	var total, shared float64
	for i := 1; i < steps; i++ {
		prev, cur := canonical(t, c.bodies[i-1]), canonical(t, c.bodies[i])
		n := commonPrefix(prev, cur)
		if n != len(prev) {
			t.Errorf("request %d diverges from request %d at byte %d of %d", i, i-1, n, len(prev))
		}
		total += float64(len(cur))
		shared += float64(n)
	}
	share := shared / total
	t.Logf("%d requests, mean body %.0f bytes, byte-identical prefix with the previous request: %.1f%%", steps, total/float64(steps-1), 100*share)
	if share < 0.9 {
		t.Errorf("cacheable prefix share %.2f, want at least 0.90", share)
	}
}

// canonical re-encodes a body in the order the API builds its cache key:
// tools, then system, then messages, with the cache_control markers
// removed (they are not part of the cached content).
func canonical(t *testing.T, body []byte) string {
	t.Helper()
	var b struct {
		Tools    []map[string]any `json:"tools"`
		System   []map[string]any `json:"system"`
		Messages []struct {
			Role    string           `json:"role"`
			Content []map[string]any `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(body, &b); err != nil {
		t.Fatal(err)
	}
	var sb strings.Builder
	enc := func(v map[string]any) {
		delete(v, "cache_control")
		out, _ := json.Marshal(v)
		sb.Write(out)
	}
	for _, v := range b.Tools {
		enc(v)
	}
	for _, v := range b.System {
		enc(v)
	}
	for _, m := range b.Messages {
		sb.WriteString(m.Role)
		for _, v := range m.Content {
			enc(v)
		}
	}
	return sb.String()
}

func commonPrefix(a, b string) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}
