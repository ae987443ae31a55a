package openai

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/ioh-lsp/ioh-lsp/internal/agent/model"
)

// Each non-empty content delta reaches the context's text callback as it
// arrives: the server holds the rest of the stream until the callback
// has seen the first piece, so a provider that only delivered the text at
// the end would time out here.
func TestCompleteStreamsText(t *testing.T) {
	seen := make(chan string, 8)
	p, _ := server(t, "openai", nil, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		chunk(w, head+`"choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}],"usage":null}`)
		chunk(w, head+`"choices":[{"index":0,"delta":{"content":"Looking "},"finish_reason":null}],"usage":null}`)
		select {
		case <-seen:
		case <-time.After(10 * time.Second):
			t.Error("the first piece did not reach the callback before the stream went on")
		}
		chunk(w, head+`"choices":[{"index":0,"delta":{"content":"around."},"finish_reason":null}],"usage":null}`)
		chunk(w, head+`"choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":null}`)
		chunk(w, `[DONE]`)
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
	if len(got) != 2 || got[0] != "Looking " || got[1] != "around." {
		t.Errorf("pieces %q, want the two non-empty contents", got)
	}
	if resp.Text != "Looking around." {
		t.Errorf("text %q", resp.Text)
	}
}
