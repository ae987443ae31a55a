package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"
)

// fakeRateLimited is an OpenAI-compatible server answering 429 while
// limited holds, then a finish call (fakeLocalModel's answer); sent
// counts every request.
func fakeRateLimited(t *testing.T) (srv *httptest.Server, limited *atomic.Bool, sent *atomic.Int32) {
	t.Helper()
	limited, sent = &atomic.Bool{}, &atomic.Int32{}
	limited.Store(true)
	ok, _ := fakeLocalModel(t)
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sent.Add(1)
		if limited.Load() {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusTooManyRequests)
			fmt.Fprint(w, `{"error":{"message":"rate limit reached","type":"rate_limit_error"}}`)
			return
		}
		ok.Config.Handler.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv, limited, sent
}

// TestDeadEndsBinary: every stopped run has a way on, through the built
// binary.
func TestDeadEndsBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := buildBinary(t)
	t.Run("resume after a 429 storm", func(t *testing.T) { testResumeProviderFailed(t, bin) })
}

// testResumeProviderFailed: a run whose provider answered 429 ends
// provider_failed (exit 5); once the provider answers again, resume sends
// a request from the last committed step and the run completes, the trace
// recording the resumption.
func testResumeProviderFailed(t *testing.T, bin string) {
	srv, limited, sent := fakeRateLimited(t)
	user := fmt.Sprintf("model:\n  provider: openai-compatible\n  base_url: %s/v1\n  name: local-llm\n", srv.URL)
	dir, env := firstHourWorkspace(t, user, "version: 1\ngoal: say done\nretry: {max: 0}\n")
	code, stderr := runIn(t, bin, dir, env, "run", "task.ioh.yaml", "--approve", "never")
	if code != 5 || sent.Load() == 0 {
		t.Fatalf("429 storm: exit %d after %d requests, want 5 after at least one\n%s", code, sent.Load(), stderr)
	}
	limited.Store(false)
	before := sent.Load()
	code, stderr = runIn(t, bin, dir, env, "resume", "--last", "--approve", "never")
	if code != 0 || sent.Load() <= before {
		t.Fatalf("resume after the storm: exit %d, %d requests sent by it; want 0 after a new request\n%s", code, sent.Load()-before, stderr)
	}
	cmd := exec.Command(bin, "trace", "--last")
	cmd.Dir, cmd.Env = dir, env
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("trace: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "resumed after provider_failed") || !strings.Contains(string(out), "verified") {
		t.Errorf("the trace should record the resumption and the verified end:\n%s", out)
	}
}
