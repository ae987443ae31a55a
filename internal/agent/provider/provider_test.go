package provider

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/ioh-lsp/ioh-lsp/internal/agent/contract"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/model"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/provider/replay"
)

const (
	antKey = "sk-ant-PLANTED-aaaa1111"
	oaiKey = "sk-oai-PLANTED-bbbb2222"
)

func env(k string) string {
	return map[string]string{"ANTHROPIC_API_KEY": antKey, "OPENAI_API_KEY": oaiKey, "OPENROUTER_API_KEY": oaiKey}[k]
}

// anthropicTurn streams a one-tool-call turn in the Messages SSE format.
func anthropicTurn(w http.ResponseWriter, text string) {
	w.Header().Set("Content-Type", "text/event-stream")
	for _, ev := range []string{
		`{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","content":[],"model":"claude-sonnet-4-6","stop_reason":null,"usage":{"input_tokens":10,"output_tokens":1,"cache_creation_input_tokens":0,"cache_read_input_tokens":90}}}`,
		`{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`,
		fmt.Sprintf(`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":%q}}`, text),
		`{"type":"content_block_stop","index":0}`,
		`{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_1","name":"finish","input":{}}}`,
		`{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"summary\":"}}`,
		`{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"\"done\"}"}}`,
		`{"type":"content_block_stop","index":1}`,
		`{"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":20}}`,
		`{"type":"message_stop"}`,
	} {
		var typ struct{ Type string }
		json.Unmarshal([]byte(ev), &typ)
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", typ.Type, ev)
	}
}

func openaiTurn(w http.ResponseWriter, text string) {
	w.Header().Set("Content-Type", "text/event-stream")
	h := `{"id":"c1","object":"chat.completion.chunk","created":1,"model":"gpt-5-2025-08-07",`
	fmt.Fprintf(w, "data: %s\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":%q},\"finish_reason\":null}]}\n\n", h, text)
	fmt.Fprintf(w, "data: %s\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n", h)
	fmt.Fprintf(w, "data: %s\"choices\":[],\"usage\":{\"prompt_tokens\":30,\"completion_tokens\":5,\"total_tokens\":35}}\n\n", h)
	fmt.Fprint(w, "data: [DONE]\n\n")
}

func apiError(w http.ResponseWriter, status int, body string, retryAfter string) {
	if retryAfter != "" {
		w.Header().Set("Retry-After", retryAfter)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	io.WriteString(w, body)
}

// scripted serves responses[i] to the i-th request (the last one repeats)
// and counts requests.
type scripted struct {
	mu    sync.Mutex
	n     int
	steps []func(w http.ResponseWriter)
	srv   *httptest.Server
}

func newScripted(t *testing.T, steps ...func(w http.ResponseWriter)) *scripted {
	s := &scripted{steps: steps}
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		s.mu.Lock()
		i := s.n
		s.n++
		s.mu.Unlock()
		if i >= len(s.steps) {
			i = len(s.steps) - 1
		}
		s.steps[i](w)
	}))
	t.Cleanup(s.srv.Close)
	return s
}

func (s *scripted) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.n
}

var (
	ant429 = func(w http.ResponseWriter) {
		apiError(w, 429, `{"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}`, "2")
	}
	ant503 = func(w http.ResponseWriter) {
		apiError(w, 503, `{"type":"error","error":{"type":"api_error","message":"unavailable"}}`, "")
	}
	ant401 = func(w http.ResponseWriter) {
		apiError(w, 401, `{"type":"error","error":{"type":"authentication_error","message":"invalid key `+antKey+`"}}`, "")
	}
	antOverflow = func(w http.ResponseWriter) {
		apiError(w, 400, `{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 300000 tokens > 200000 maximum"}}`, "")
	}
	antOK = func(w http.ResponseWriter) { anthropicTurn(w, "hello") }
	oaiOK = func(w http.ResponseWriter) { openaiTurn(w, "from openai") }
)

// harness is a chain built by New with recorded retries and sleeps.
type harness struct {
	p      model.Provider
	mu     sync.Mutex
	infos  []RetryInfo
	sleeps []time.Duration
}

func newHarness(t *testing.T, spec contract.Model, retry contract.Retry, record string) *harness {
	t.Helper()
	h := &harness{}
	p, err := New(spec, retry, Options{
		Getenv:  env,
		OnRetry: func(i RetryInfo) { h.mu.Lock(); h.infos = append(h.infos, i); h.mu.Unlock() },
		Record:  record,
		Sleep: func(ctx context.Context, d time.Duration) error {
			h.mu.Lock()
			h.sleeps = append(h.sleeps, d)
			h.mu.Unlock()
			return ctx.Err()
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	c, ok := p.(*Chain)
	if !ok {
		c = p.(*Recorder).inner.(*Chain)
	}
	c.jitter = func() float64 { return 1 } // the top of the jitter range: deterministic
	h.p = p
	return h
}

type retryRow struct {
	Provider string
	Attempt  int
	Class    model.Class
	Delay    time.Duration
	Next     string
}

func (h *harness) rows() []retryRow {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []retryRow
	for _, i := range h.infos {
		out = append(out, retryRow{i.Provider, i.Attempt, i.Class, i.Delay, i.Next})
	}
	return out
}

var req = &model.Request{Messages: []model.Message{{Role: model.RoleUser, Text: "go"}}}

func TestChain(t *testing.T) {
	retry := contract.Retry{Max: 3, Base: 100 * time.Millisecond, Cap: 10 * time.Second}
	tests := []struct {
		name         string
		primary      []func(http.ResponseWriter)
		fallback     []func(http.ResponseWriter) // openai; nil for none
		retry        contract.Retry
		wantPrimary  int
		wantFallback int
		wantRows     []retryRow
		wantFrom     string // provider that answered; "" when the call fails
		wantClass    model.Class
	}{
		{"429 honours Retry-After, 503 backs off, then success", []func(http.ResponseWriter){ant429, ant503, antOK}, nil, retry, 3, 0,
			[]retryRow{{"anthropic", 1, model.ClassRateLimited, 2 * time.Second, ""}, {"anthropic", 2, model.ClassServer, 200 * time.Millisecond, ""}},
			"anthropic", ""},
		{"Retry-After is capped by retry.cap", []func(http.ResponseWriter){ant429, antOK}, nil, contract.Retry{Max: 3, Base: time.Millisecond, Cap: 500 * time.Millisecond}, 2, 0,
			[]retryRow{{"anthropic", 1, model.ClassRateLimited, 500 * time.Millisecond, ""}},
			"anthropic", ""},
		{"backoff doubles up to the cap", []func(http.ResponseWriter){ant503}, nil, contract.Retry{Max: 4, Base: 100 * time.Millisecond, Cap: 300 * time.Millisecond}, 5, 0,
			[]retryRow{
				{"anthropic", 1, model.ClassServer, 100 * time.Millisecond, ""},
				{"anthropic", 2, model.ClassServer, 200 * time.Millisecond, ""},
				{"anthropic", 3, model.ClassServer, 300 * time.Millisecond, ""},
				{"anthropic", 4, model.ClassServer, 300 * time.Millisecond, ""},
			}, "", model.ClassServer},
		{"auth is not retried and falls back", []func(http.ResponseWriter){ant401}, []func(http.ResponseWriter){oaiOK}, retry, 1, 1,
			[]retryRow{{"anthropic", 1, model.ClassAuth, 0, "openai"}},
			"openai", ""},
		{"after the last retry the fallback answers", []func(http.ResponseWriter){ant503}, []func(http.ResponseWriter){oaiOK}, contract.Retry{Max: 2, Base: time.Millisecond, Cap: time.Second}, 3, 1,
			[]retryRow{
				{"anthropic", 1, model.ClassServer, time.Millisecond, ""},
				{"anthropic", 2, model.ClassServer, 2 * time.Millisecond, ""},
				{"anthropic", 3, model.ClassServer, 0, "openai"},
			}, "openai", ""},
		{"context overflow goes back to the caller", []func(http.ResponseWriter){antOverflow}, []func(http.ResponseWriter){oaiOK}, retry, 1, 0,
			nil, "", model.ClassContextOverflow},
		{"max 0 means one attempt", []func(http.ResponseWriter){ant503}, nil, contract.Retry{Max: 0, Base: time.Millisecond, Cap: time.Second}, 1, 0,
			nil, "", model.ClassServer},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			prim := newScripted(t, tt.primary...)
			spec := contract.Model{Provider: "anthropic", Name: "claude-sonnet-4-6", BaseURL: prim.srv.URL}
			var fb *scripted
			if tt.fallback != nil {
				fb = newScripted(t, tt.fallback...)
				spec.Fallback = []contract.Fallback{{Provider: "openai", Name: "gpt-5", BaseURL: fb.srv.URL}}
			}
			h := newHarness(t, spec, tt.retry, "")
			resp, err := h.p.Complete(context.Background(), req)
			gotFrom := ""
			if err == nil {
				gotFrom = resp.Provider
			}
			if gotFrom != tt.wantFrom || model.ClassOf(err) != tt.wantClass && err != nil {
				t.Errorf("answered by %q, err %v; want %q, class %q", gotFrom, err, tt.wantFrom, tt.wantClass)
			}
			if tt.wantClass == model.ClassContextOverflow && !IsContextOverflow(err) {
				t.Errorf("IsContextOverflow(%v) = false", err)
			}
			gotFB := 0
			if fb != nil {
				gotFB = fb.count()
			}
			if diff := cmp.Diff([]int{prim.count(), gotFB}, []int{tt.wantPrimary, tt.wantFallback}); diff != "" {
				t.Errorf("requests to primary, fallback (-got +want):\n%s", diff)
			}
			if diff := cmp.Diff(h.rows(), tt.wantRows); diff != "" {
				t.Errorf("retries (-got +want):\n%s", diff)
			}
			var sleeps []time.Duration
			for _, r := range tt.wantRows {
				if r.Delay > 0 {
					sleeps = append(sleeps, r.Delay)
				}
			}
			if diff := cmp.Diff(h.sleeps, sleeps, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("sleeps (-got +want):\n%s", diff)
			}
			if err != nil && strings.Contains(err.Error(), antKey) {
				t.Errorf("the API key appears in the error: %v", err)
			}
		})
	}
}

func TestChainNeverSleepsPastDeadline(t *testing.T) {
	prim := newScripted(t, func(w http.ResponseWriter) {
		apiError(w, 429, `{"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}`, "60")
	})
	h := newHarness(t, contract.Model{Provider: "anthropic", BaseURL: prim.srv.URL}, contract.Retry{Max: 5, Base: time.Second, Cap: time.Minute}, "")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err := h.p.Complete(ctx, req)
	if model.ClassOf(err) != model.ClassRateLimited {
		t.Fatalf("err = %v, want rate_limited", err)
	}
	if len(h.sleeps) != 0 || prim.count() != 1 {
		t.Errorf("slept %v over %d requests; want no sleep past the deadline and 1 request", h.sleeps, prim.count())
	}
}

func TestChainRealSleepEndsWithContext(t *testing.T) {
	prim := newScripted(t, ant503)
	p, err := New(contract.Model{Provider: "anthropic", BaseURL: prim.srv.URL}, contract.Retry{Max: 5, Base: time.Hour, Cap: time.Hour}, Options{Getenv: env})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	p.(*Chain).onRetry = func(RetryInfo) { cancel() }
	_, err = p.Complete(ctx, req)
	if !errors.Is(err, context.Canceled) || model.ClassOf(err) != model.ClassServer {
		t.Errorf("err = %v; want it to wrap context.Canceled and the server failure", err)
	}
}

func TestMissingKeyFallsBack(t *testing.T) {
	fb := newScripted(t, oaiOK)
	spec := contract.Model{Provider: "anthropic", APIKeyEnv: "OTHER_API_KEY",
		Fallback: []contract.Fallback{{Provider: "openai-compatible", Name: "llama", BaseURL: fb.srv.URL}}}
	h := newHarness(t, spec, contract.Retry{Max: 2}, "")
	resp, err := h.p.Complete(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{resp.Provider, resp.Text}, []string{"openai-compatible", "from openai"}); diff != "" {
		t.Errorf("(-got +want):\n%s", diff)
	}
	if diff := cmp.Diff(h.rows(), []retryRow{{"anthropic", 1, model.ClassAuth, 0, "openai-compatible"}}); diff != "" {
		t.Errorf("retries (-got +want):\n%s", diff)
	}
	if got := h.infos[0].Err.Error(); got != "anthropic: auth: OTHER_API_KEY is not set" {
		t.Errorf("missing key error = %q", got)
	}
}

func TestNewErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.json")
	os.WriteFile(bad, []byte(`{"version": 9}`), 0o644)
	tests := []struct {
		name   string
		spec   contract.Model
		record string
		want   string
	}{
		{"record into a missing directory", contract.Model{Provider: "openai"}, filepath.Join(dir, "no", "c.json"), "record cassette " + filepath.Join(dir, "no", "c.json") + ": directory " + filepath.Join(dir, "no") + " does not exist"},
		{"no key for any link", contract.Model{Provider: "anthropic", APIKeyEnv: "OTHER_API_KEY", Fallback: []contract.Fallback{{Provider: "openai", APIKeyEnv: "NONE_API_KEY"}}}, "",
			"no API key: OTHER_API_KEY for anthropic, NONE_API_KEY for openai not set in the environment: export it (or name the variable that holds the key with model.api_key_env)"},
		{"api_key_env not a key", contract.Model{Provider: "openai", APIKeyEnv: "HOME"}, "", `openai: api_key_env "HOME" must end in _API_KEY or _TOKEN`},
		{"fallback api_key_env", contract.Model{Provider: "openai", Fallback: []contract.Fallback{{Provider: "anthropic", APIKeyEnv: "AWS_SECRET_ACCESS_KEY"}}}, "", `fallback 1: anthropic: api_key_env "AWS_SECRET_ACCESS_KEY" must end in _API_KEY or _TOKEN`},
		{"unknown provider", contract.Model{Provider: "gemini"}, "", `unknown provider "gemini" (want one of anthropic, openai, openrouter, openai-compatible, replay)`},
		{"compatible without base_url", contract.Model{Provider: "openai-compatible", Name: "m"}, "", "openai-compatible needs model.base_url"},
		{"compatible without name", contract.Model{Provider: "openai-compatible", BaseURL: "http://localhost:11434/v1"}, "", "openai-compatible needs model.name"},
		{"replay without cassette", contract.Model{Provider: "replay"}, "", "replay needs model.cassette"},
		{"replay fallback", contract.Model{Provider: "openai", Fallback: []contract.Fallback{{Provider: "replay"}}}, "", "fallback 1: replay needs model.cassette"},
		{"bad cassette", contract.Model{Provider: "replay", Cassette: bad}, "", "cassette " + bad + ": unsupported version 9 (want 1)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := New(tt.spec, contract.DefaultRetry(), Options{Getenv: env, Record: tt.record})
			if err == nil || err.Error() != tt.want {
				t.Errorf("New error = %v, want %s", err, tt.want)
			}
		})
	}
}

func TestReplayByDefault(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.json")
	os.WriteFile(path, []byte(`{"version":1,"turns":[{"text":"hi","usage":{"input_tokens":3,"output_tokens":1}}]}`), 0o644)
	p, err := New(contract.Model{Cassette: path}, contract.DefaultRetry(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := p.Complete(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	want := &model.Response{Text: "hi", Usage: model.Usage{InputTokens: 3, OutputTokens: 1}, StopReason: "end_turn", Provider: "replay", Model: "replay"}
	if diff := cmp.Diff(resp, want); diff != "" {
		t.Errorf("(-got +want):\n%s", diff)
	}
	_, err = p.Complete(context.Background(), &model.Request{Messages: []model.Message{{Role: model.RoleAssistant}}})
	if model.ClassOf(err) != model.ClassExhausted {
		t.Errorf("past the end: %v, want exhausted (not retried)", err)
	}
}

func TestRecordThenReplay(t *testing.T) {
	prim := newScripted(t, antOK)
	path := filepath.Join(t.TempDir(), "rec.json")
	h := newHarness(t, contract.Model{Provider: "anthropic", BaseURL: prim.srv.URL}, contract.DefaultRetry(), path)
	transcript := []model.Message{{Role: model.RoleUser, Text: "go"}}
	var live []*model.Response
	for i := 0; i < 2; i++ {
		resp, err := h.p.Complete(context.Background(), &model.Request{Messages: transcript})
		if err != nil {
			t.Fatal(err)
		}
		live = append(live, resp)
		transcript = append(transcript,
			model.Message{Role: model.RoleAssistant, Text: resp.Text, ToolCalls: resp.ToolCalls},
			model.Message{Role: model.RoleUser, ToolResults: []model.ToolResult{{CallID: resp.ToolCalls[0].ID, Content: "ok"}}})
	}
	child, err := h.p.Complete(context.Background(), &model.Request{Agent: "sub goal", Messages: transcript[:1]})
	if err != nil {
		t.Fatal(err)
	}
	c, err := replay.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Turns) != 2 || len(c.Children["sub goal"]) != 1 {
		t.Fatalf("recorded %d root turns and %d child turns, want 2 and 1", len(c.Turns), len(c.Children["sub goal"]))
	}
	rp := replay.New(c)
	for i, want := range append(live, child) {
		r := &model.Request{Messages: transcript[:1+2*i]}
		if i == 2 {
			r = &model.Request{Agent: "sub goal", Messages: transcript[:1]}
		}
		got, err := rp.Complete(context.Background(), r)
		if err != nil {
			t.Fatal(err)
		}
		ignore := cmpopts.IgnoreFields(model.Response{}, "Provider", "Model")
		ignoreIDs := cmpopts.IgnoreFields(model.ToolCall{}, "ID")
		if diff := cmp.Diff(got, want, ignore, ignoreIDs); diff != "" {
			t.Errorf("turn %d replayed (-got +want):\n%s", i, diff)
		}
	}
	// A fresh run recording to the same file starts a new cassette.
	if _, err := h.p.Complete(context.Background(), &model.Request{Messages: transcript[:1]}); err != nil {
		t.Fatal(err)
	}
	c, err = replay.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Turns) != 1 || len(c.Children) != 0 {
		t.Errorf("after a fresh turn 0: %d turns, %d children; want 1, 0", len(c.Turns), len(c.Children))
	}
}

// TestProviderFromEnv: with nothing configured, the key in the
// environment picks its provider (anthropic before openai before
// openrouter) and New says so; with no key either, ErrNoProvider names
// the user config, the variables and --cassette. A cassette still means
// replay whatever keys are set.
func TestProviderFromEnv(t *testing.T) {
	only := func(k string) func(string) string {
		return func(name string) string {
			if name == k {
				return "sk-test"
			}
			return ""
		}
	}
	var notes []string
	p, err := New(contract.Model{}, contract.DefaultRetry(), Options{Getenv: only("OPENAI_API_KEY"), Notice: func(s string) { notes = append(notes, s) }})
	if err != nil {
		t.Fatal(err)
	}
	if got := p.(*Chain).links[0]; got.Provider.Name() != KindOpenAI || got.Model != "gpt-5" {
		t.Errorf("picked %s %s, want openai gpt-5", got.Provider.Name(), got.Model)
	}
	if len(notes) != 1 || !strings.Contains(notes[0], "using openai (gpt-5) because OPENAI_API_KEY is set") || !strings.Contains(notes[0], "model.provider in the user config ~/.config/ioh/config.yaml") {
		t.Errorf("notice %q", notes)
	}
	if k, _ := FromEnv(env); k != KindAnthropic {
		t.Errorf("with every key set FromEnv = %s, want anthropic", k)
	}
	_, err = New(contract.Model{}, contract.DefaultRetry(), Options{Getenv: only("NONE")})
	if !errors.Is(err, ErrNoProvider) || !strings.Contains(err.Error(), "~/.config/ioh/config.yaml") || !strings.Contains(err.Error(), "ANTHROPIC_API_KEY") {
		t.Errorf("nothing configured: %v", err)
	}
	cas := filepath.Join(t.TempDir(), "c.json")
	os.WriteFile(cas, []byte(`{"version":1,"turns":[]}`), 0o644)
	p, err = New(contract.Model{Cassette: cas}, contract.DefaultRetry(), Options{Getenv: env})
	if err != nil || p.(*Chain).links[0].Provider.Name() != KindReplay {
		t.Errorf("a cassette with keys set: %v, %v", p, err)
	}
}
