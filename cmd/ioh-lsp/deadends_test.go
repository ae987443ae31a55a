package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
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
	t.Run("dollar pre-check names the least raise", func(t *testing.T) { testMinimumRaise(t, bin) })
	t.Run("reject with feedback continues the run", func(t *testing.T) { testRejectFeedback(t, bin) })
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

// testMinimumRaise: a priced model whose first call may cost more than
// the dollar limit is refused before the call (exit 3), naming the least
// limit and the resume command that gives it; a resume below it is refused
// naming it (exit 2, no request, the run still resumable); a resume with
// it sends the call and completes.
func testMinimumRaise(t *testing.T, bin string) {
	srv, sent := fakeLocalModel(t)
	// 8192 output tokens at $10 per million: the first call may cost
	// about $0.082, over a limit of $0.05.
	user := fmt.Sprintf("model:\n  provider: openai-compatible\n  base_url: %s/v1\n  name: local-llm\nprices:\n  local-llm: {input: 1, output: 10}\n", srv.URL)
	dir, env := firstHourWorkspace(t, user, "version: 1\ngoal: say done\nbudget:\n  cost_usd: 0.05\n")
	code, stderr := runIn(t, bin, dir, env, "run", "task.ioh.yaml", "--approve", "never")
	m := regexp.MustCompile("raise the limit to at least \\$([0-9.]+) with `ioh-lsp resume (r-[0-9a-f]+) --budget-usd ([0-9.]+)`").FindStringSubmatch(stderr)
	if code != 3 || sent.Load() != 0 || m == nil || m[1] != m[3] {
		t.Fatalf("pre-check: exit %d after %d requests, want 3 before any, naming the least raise and the command\n%s", code, sent.Load(), stderr)
	}
	least, _ := strconv.ParseFloat(m[1], 64)
	if least < 0.08 || least > 0.10 {
		t.Errorf("the least raise $%s should be the estimate ($0.082 or so) rounded up to the cent", m[1])
	}
	code, stderr = runIn(t, bin, dir, env, "resume", m[2], "--budget-usd", "0.06", "--approve", "never")
	if code != 2 || sent.Load() != 0 || !strings.Contains(stderr, "at least $"+m[1]) || !strings.Contains(stderr, "--budget-usd "+m[1]) {
		t.Fatalf("a raise below the least: exit %d after %d requests, want 2 before any, naming $%s\n%s", code, sent.Load(), m[1], stderr)
	}
	code, stderr = runIn(t, bin, dir, env, "resume", m[2], "--budget-usd", m[1], "--approve", "never")
	if code != 0 || sent.Load() != 1 {
		t.Fatalf("the least raise: exit %d after %d requests, want 0 after one\n%s", code, sent.Load(), stderr)
	}
}

// toolCallStream is an OpenAI-compatible stream whose answer is one call
// of tool with args (a JSON object).
func toolCallStream(w http.ResponseWriter, tool, args string) {
	w.Header().Set("Content-Type", "text/event-stream")
	h := `{"id":"c1","object":"chat.completion.chunk","created":1,"model":"local-llm",`
	q, _ := json.Marshal(args)
	fmt.Fprintf(w, "data: %s\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"tool_calls\":[{\"index\":0,\"id\":\"call_1\",\"type\":\"function\",\"function\":{\"name\":%q,\"arguments\":%s}}]},\"finish_reason\":null}]}\n\n", h, tool, q)
	fmt.Fprintf(w, "data: %s\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\n\n", h)
	fmt.Fprintf(w, "data: %s\"choices\":[],\"usage\":{\"prompt_tokens\":30,\"completion_tokens\":5,\"total_tokens\":35}}\n\n", h)
	fmt.Fprint(w, "data: [DONE]\n\n")
}

// testRejectFeedback: a pending change rejected with --feedback continues
// the run: the next request carries the feedback, the change set is kept
// (the model's revision edits it), and the revised change is offered
// again; the trace records the rejection. Control: reject without
// feedback ends the run rejected and sends nothing.
func testRejectFeedback(t *testing.T, bin string) {
	var mu sync.Mutex
	var bodies []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		bodies = append(bodies, string(b))
		mu.Unlock()
		switch {
		case strings.Contains(string(b), "do X instead") && !strings.Contains(string(b), "revised"):
			toolCallStream(w, "write_file", `{"path":"notes.txt","content":"revised: X\n"}`)
		case !strings.Contains(string(b), "first try"):
			toolCallStream(w, "write_file", `{"path":"notes.txt","content":"first try\n"}`)
		default:
			toolCallStream(w, "finish", `{"summary":"wrote notes.txt"}`)
		}
	}))
	t.Cleanup(srv.Close)
	sent := func() int { mu.Lock(); defer mu.Unlock(); return len(bodies) }
	user := fmt.Sprintf("model:\n  provider: openai-compatible\n  base_url: %s/v1\n  name: local-llm\n", srv.URL)
	dir, env := firstHourWorkspace(t, user, "version: 1\ngoal: write notes.txt\nbudget: {cost_usd: 0}\n")
	code, stderr := runIn(t, bin, dir, env, "run", "task.ioh.yaml", "--approve", "never")
	if code != 0 || !strings.Contains(stderr, "notes.txt") {
		t.Fatalf("first run: exit %d, want 0 with the change pending\n%s", code, stderr)
	}
	before := sent()
	code, stderr = runIn(t, bin, dir, env, "reject", "--last", "--feedback", "no, do X instead", "--approve", "never")
	if code != 0 || sent() <= before {
		t.Fatalf("reject --feedback: exit %d after %d new requests, want 0 after some\n%s", code, sent()-before, stderr)
	}
	mu.Lock()
	next := bodies[before]
	mu.Unlock()
	if !strings.Contains(next, "no, do X instead") || !strings.Contains(next, "kept") {
		t.Errorf("the first request after the rejection should carry the feedback:\n%s", next)
	}
	cmd := exec.Command(bin, "diff", "--last")
	cmd.Dir, cmd.Env = dir, env
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "+revised: X") {
		t.Errorf("the revised change should be pending (%v):\n%s", err, out)
	}
	if _, err := os.Stat(filepath.Join(dir, "notes.txt")); err == nil {
		t.Errorf("nothing should be applied while the revised change is pending")
	}
	cmd = exec.Command(bin, "trace", "--last", "--json")
	cmd.Dir, cmd.Env = dir, env
	out, _ = cmd.CombinedOutput()
	if !strings.Contains(string(out), "feedback: no, do X instead") {
		t.Errorf("the trace should record the rejection with its feedback:\n%s", out)
	}
	// Control: without feedback the run ends rejected, nothing sent.
	before = sent()
	code, stderr = runIn(t, bin, dir, env, "reject", "--last", "--reason", "not wanted")
	if code != 0 || sent() != before || !strings.Contains(stderr, "rejected") {
		t.Errorf("reject without feedback: exit %d after %d requests, want 0 and rejected after none\n%s", code, sent()-before, stderr)
	}
}
