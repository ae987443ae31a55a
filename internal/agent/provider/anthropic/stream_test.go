package anthropic

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/ioh-lsp/ioh-lsp/internal/agent/model"
)

// Each text_delta reaches the context's text callback as it arrives (the
// server holds the rest of the stream until the first one has), and a
// tool call's input_json_delta pieces never do.
func TestCompleteStreamsText(t *testing.T) {
	seen := make(chan string, 8)
	p, _ := server(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		event(w, "message_start", `{"type":"message_start","message":{"id":"msg_01","type":"message","role":"assistant","content":[],"model":"claude-sonnet-4-6","stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":25,"output_tokens":1}}}`)
		event(w, "content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`)
		event(w, "content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Looking at "}}`)
		select {
		case <-seen:
		case <-time.After(10 * time.Second):
			t.Error("the first piece did not reach the callback before the stream went on")
		}
		event(w, "content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"the parser."}}`)
		event(w, "content_block_stop", `{"type":"content_block_stop","index":0}`)
		event(w, "content_block_start", `{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_01A","name":"grep","input":{}}}`)
		event(w, "content_block_delta", `{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"pattern\": \"x\"}"}}`)
		event(w, "content_block_stop", `{"type":"content_block_stop","index":1}`)
		event(w, "message_delta", `{"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":57}}`)
		event(w, "message_stop", `{"type":"message_stop"}`)
	})
	var got []string
	ctx := model.WithTextDelta(context.Background(), func(s string) {
		got = append(got, s)
		seen <- s
	})
	resp, err := p.Complete(ctx, transcript())
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0] != "Looking at " || got[1] != "the parser." {
		t.Errorf("pieces %q, want the two text deltas", got)
	}
	if resp.Text != "Looking at the parser." || len(resp.ToolCalls) != 1 {
		t.Errorf("response %q with %d tool calls", resp.Text, len(resp.ToolCalls))
	}
}
