package provider

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ioh-lsp/ioh-lsp/internal/agent/contract"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/model"
)

// stallServer answers its first request with the fault (it hangs until
// the client goes away) and every later one with a good turn in the
// provider's wire format.
func stallServer(t *testing.T, fault string, turn func(http.ResponseWriter, string)) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	var n atomic.Int32
	stop := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1) > 1 {
			turn(w, "answered")
			return
		}
		switch fault {
		case "headers":
			// Nothing at all: no status line.
		case "first byte":
			w.Header().Set("Content-Type", "text/event-stream")
			w.WriteHeader(http.StatusOK)
			w.(http.Flusher).Flush()
		case "mid-stream":
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprint(w, `data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":"par"},"finish_reason":null}]}`+"\n\n")
			w.(http.Flusher).Flush()
		}
		select { // the client going away, or the test's end
		case <-r.Context().Done():
		case <-stop:
		}
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(stop) }) // runs first
	return srv, &n
}

// TestStalledProviderIsRetried: a provider that stops sending (before
// the status line, after it but before the first byte, mid-stream) fails
// that attempt as a timeout within the bound, which names its key, and
// the chain's retry gets the answer. Control: with the bounds far off,
// the same stall is still waiting when the test gives up on it.
func TestStalledProviderIsRetried(t *testing.T) {
	const bound = 200 * time.Millisecond
	for _, fault := range []string{"headers", "first byte", "mid-stream"} {
		t.Run(fault, func(t *testing.T) {
			srv, n := stallServer(t, fault, openaiTurn)
			var retries []RetryInfo
			p, err := New(contract.Model{Provider: KindOpenAICompatible, Name: "m", BaseURL: srv.URL + "/v1"}, contract.Retry{Max: 2, Base: time.Millisecond, Cap: time.Millisecond},
				Options{Getenv: env, FirstByteTimeout: bound, IdleTimeout: bound, OnRetry: func(r RetryInfo) { retries = append(retries, r) }})
			if err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			resp, err := p.Complete(context.Background(), &model.Request{Messages: []model.Message{{Role: model.RoleUser, Text: "hi"}}})
			took := time.Since(start)
			if err != nil {
				t.Fatalf("after a stall and a retry: %v", err)
			}
			if resp.Text != "answered" || n.Load() != 2 || len(retries) != 1 {
				t.Fatalf("text %q after %d requests, retries %+v", resp.Text, n.Load(), retries)
			}
			r := retries[0]
			key := "model.idle_timeout"
			if fault != "mid-stream" {
				key = "model.first_byte_timeout"
			}
			if r.Class != model.ClassTimeout || r.Err == nil || !strings.Contains(r.Err.Error(), key) {
				t.Errorf("the stall was retried as %s: %v; want class timeout naming %s", r.Class, r.Err, key)
			}
			t.Logf("%s: stall noticed and retried, answer after %v (bound %v)", fault, took, bound)
		})
	}
	t.Run("control", func(t *testing.T) {
		srv, _ := stallServer(t, "mid-stream", openaiTurn)
		p, err := New(contract.Model{Provider: KindOpenAICompatible, Name: "m", BaseURL: srv.URL + "/v1"}, contract.Retry{Max: 2, Base: time.Millisecond, Cap: time.Millisecond},
			Options{Getenv: env, FirstByteTimeout: time.Hour, IdleTimeout: time.Hour})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*bound)
		defer cancel()
		_, err = p.Complete(ctx, &model.Request{Messages: []model.Message{{Role: model.RoleUser, Text: "hi"}}})
		if !errors.Is(err, context.DeadlineExceeded) && (err == nil || !strings.Contains(err.Error(), "deadline")) {
			t.Errorf("without the bound the stall should hold the call until the caller's deadline: %v", err)
		}
	})
}

// TestStalledAnthropicIsRetried: the same for the Messages stream.
func TestStalledAnthropicIsRetried(t *testing.T) {
	srv, n := stallServer(t, "first byte", anthropicTurn)
	p, err := New(contract.Model{Provider: KindAnthropic, BaseURL: srv.URL}, contract.Retry{Max: 2, Base: time.Millisecond, Cap: time.Millisecond},
		Options{Getenv: env, FirstByteTimeout: 200 * time.Millisecond, IdleTimeout: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := p.Complete(context.Background(), &model.Request{Messages: []model.Message{{Role: model.RoleUser, Text: "hi"}}})
	if err != nil || resp.Text != "answered" || n.Load() != 2 {
		t.Fatalf("after a stall: %v, %+v, %d requests", err, resp, n.Load())
	}
}
