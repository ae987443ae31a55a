package acp

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ioh-lsp/ioh-lsp/internal/wire"
)

// endpoints are OpenAI-compatible servers that refuse every request (the
// run ends at its first model call) and record which one each request
// reached, in order.
type endpoints struct {
	mu   sync.Mutex
	hits []string
}

func (e *endpoints) serve(t *testing.T, name string) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		e.mu.Lock()
		e.hits = append(e.hits, name)
		e.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		w.Write([]byte(`{"error": {"message": "the test ends the run here", "type": "invalid_request_error"}}`))
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/v1"
}

func (e *endpoints) take() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := e.hits
	e.hits = nil
	return out
}

// newConfiguredClient is a client whose engines read a user config (the
// cmd/ioh-lsp factory's way: the session's model choice applied with
// ChooseModel) under a HOME of the test's own.
func newConfiguredClient(t *testing.T, userYAML string) *client {
	t.Helper()
	home, state := t.TempDir(), t.TempDir()
	if err := os.MkdirAll(filepath.Join(home, "ioh"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, "ioh", "config.yaml"), []byte(userYAML), 0o600); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"HOME": home, "XDG_CONFIG_HOME": home, "IOH_STATE_DIR": state}
	getenv := func(k string) string { return env[k] }
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	srv := New(Options{Logger: slog.New(slog.DiscardHandler), Version: "test", StateDir: t.TempDir(), Getenv: getenv,
		NewEngine: func(ctx context.Context, r EngineRequest) (*Engine, error) {
			cfg, err := wire.LoadConfig(r.Root, getenv, nil)
			if err != nil {
				return nil, err
			}
			choices := ChooseModel(cfg, r.Model, r.Logger)
			e, err := wire.NewHarness(ctx, wire.Options{Root: r.Root, Getenv: getenv, Environ: func() []string { return nil },
				Approver: r.Approver, Sink: r.Sink, Logger: r.Logger, Config: cfg})
			if err != nil {
				return nil, err
			}
			return &Engine{Harness: e.Harness, Root: e.Root, Close: e.Close, Approve: cfg.Approve, Models: choices}, nil
		}})
	c := &client{t: t, ctx: ctx, in: inW, wait: map[float64]chan map[string]any{}, done: make(chan error, 1),
		onAsk: func(map[string]any) any { return selected(optRejectOnce) }}
	go func() { c.done <- srv.Serve(ctx, inR, outW); outW.Close() }()
	go c.read(outR)
	t.Cleanup(func() {
		inW.Close()
		select {
		case <-c.done:
		case <-time.After(30 * time.Second):
			t.Error("the server did not stop after stdin closed")
		}
	})
	return c
}

func result(t *testing.T, r map[string]any) map[string]any {
	t.Helper()
	res, ok := r["result"].(map[string]any)
	if !ok {
		t.Fatalf("no result: %v", r)
	}
	return res
}

// option is the config option id of a session/new, set_config_option or
// config_option_update answer.
func option(t *testing.T, res map[string]any, id string) map[string]any {
	t.Helper()
	opts, _ := res["configOptions"].([]any)
	for _, o := range opts {
		if m := o.(map[string]any); m["id"] == id {
			return m
		}
	}
	t.Fatalf("no config option %q in %v", id, res)
	return nil
}

// TestModelConfigOptionChoosesTheEndpoint: the model config option offers
// the configured model and its fallback; choosing the fallback makes the
// session's next run call it first (its endpoint gets the first request),
// where before the switch (the control) the configured model's did.
func TestModelConfigOptionChoosesTheEndpoint(t *testing.T) {
	var hits endpoints
	a, b := hits.serve(t, "a"), hits.serve(t, "b")
	c := newConfiguredClient(t, fmt.Sprintf("approve: never\nmodel:\n  provider: openai-compatible\n  name: model-a\n  base_url: %s\n  fallback:\n    - { provider: openai-compatible, name: model-b, base_url: %s }\n", a, b))
	ws := t.TempDir()
	c.call(methodInitialize, map[string]any{"protocolVersion": 1})
	res := result(t, c.call(methodSessionNew, map[string]any{"cwd": ws, "mcpServers": []any{}}))
	sid := res["sessionId"].(string)
	if got := res["modes"].(map[string]any)["currentModeId"]; got != modeNever {
		t.Errorf("a session starts in the configuration's approve mode: %v, want never", got)
	}
	model := option(t, res, configModel)
	var values []string
	for _, o := range model["options"].([]any) {
		values = append(values, o.(map[string]any)["value"].(string))
	}
	if strings.Join(values, " ") != "openai-compatible/model-a openai-compatible/model-b" || model["currentValue"] != "openai-compatible/model-a" {
		t.Fatalf("model option: %v", model)
	}
	prompt := map[string]any{"sessionId": sid, "prompt": []any{map[string]any{"type": "text", "text": "Say hello"}}}
	c.call(methodSessionPrompt, prompt)
	if got := hits.take(); len(got) == 0 || got[0] != "a" {
		t.Fatalf("control: the configured model's endpoint was not called first: %v", got)
	}
	bad := c.call(methodSetConfigOption, map[string]any{"sessionId": sid, "configId": configModel, "value": "openai/gpt-x"})
	if e, _ := bad["error"].(map[string]any); e == nil || !strings.Contains(fmt.Sprint(e["message"]), "the configuration offers openai-compatible/model-a, openai-compatible/model-b") {
		t.Errorf("an unknown model: %v", bad)
	}
	set := result(t, c.call(methodSetConfigOption, map[string]any{"sessionId": sid, "configId": configModel, "value": "openai-compatible/model-b"}))
	if got := option(t, set, configModel)["currentValue"]; got != "openai-compatible/model-b" {
		t.Errorf("after the switch the option shows %v", got)
	}
	c.call(methodSessionPrompt, prompt)
	if got := hits.take(); len(got) == 0 || got[0] != "b" {
		t.Errorf("after choosing model-b its endpoint was not called first: %v", got)
	}
}

// messagesSince are the agent's messages among updates[from:].
func messagesSince(updates []map[string]any, from int) string {
	var b strings.Builder
	for _, u := range updates[from:] {
		if u["sessionUpdate"] == "agent_message_chunk" {
			b.WriteString(fmt.Sprint(u["content"].(map[string]any)["text"]))
		}
	}
	return b.String()
}

// TestCommandsAnswerWithoutARun: after an applied run, /runs lists it,
// /undo puts the file back and a second /undo says it was undone
// already; in mode never /reject drops the pending change and settles
// its call. No command starts a run: the workspace holds the two runs of
// the two prompts only.
func TestCommandsAnswerWithoutARun(t *testing.T) {
	ws, task, cassette := workspaceWithTask(t)
	file := filepath.Join(ws, "stats.go")
	c := newClient(t, cassette, func(map[string]any) any { return selected(optAllowOnce) })
	sid := openSession(t, c, ws)
	command := func(text string) string {
		t.Helper()
		from := len(c.updates())
		r := c.call(methodSessionPrompt, map[string]any{"sessionId": sid, "prompt": []any{map[string]any{"type": "text", "text": text}}})
		if got := result(t, r)["stopReason"]; got != stopEndTurn {
			t.Fatalf("%s: stop reason %v", text, got)
		}
		return messagesSince(c.updates(), from)
	}
	c.call(methodSessionPrompt, taskPrompt(sid, task))
	if got := readFile(t, file); got != statsAfter {
		t.Fatalf("the allowed change was not written:\n%s", got)
	}
	if out := command("/runs"); !regexp.MustCompile(`- r-[0-9a-f]+ applied \(this session, `).MatchString(out) {
		t.Errorf("/runs:\n%s", out)
	}
	if out := command("/undo"); !strings.Contains(out, "undone: stats.go put back") || readFile(t, file) != statsBefore {
		t.Errorf("/undo: %s\n%s", out, readFile(t, file))
	}
	if out := command("/undo"); !strings.Contains(out, "/undo: ") || !strings.Contains(out, "already undone") {
		t.Errorf("second /undo: %s", out)
	}
	c.call(methodSetMode, map[string]any{"sessionId": sid, "modeId": modeNever})
	c.call(methodSessionPrompt, taskPrompt(sid, task))
	if out := command("/reject not this way"); !strings.Contains(out, "change is dropped; nothing was written") {
		t.Errorf("/reject: %s", out)
	}
	if got := readFile(t, file); got != statsBefore {
		t.Errorf("mode never or /reject wrote the file:\n%s", got)
	}
	var settled bool
	for _, u := range c.updates() {
		if id, _ := u["toolCallId"].(string); strings.HasSuffix(id, "/change") && u["status"] == statusFailed {
			settled = true
		}
	}
	if !settled {
		t.Error("the rejected change's call was not settled")
	}
	out := command("/runs")
	if n := strings.Count(out, "- r-"); n != 2 {
		t.Errorf("/runs after two prompts and five commands lists %d runs, want 2:\n%s", n, out)
	}
}

// streamingEndpoint answers every chat completion as an OpenAI-compatible
// server streaming pieces: server-sent chunks of the text, then the
// finish reason and the usage.
func streamingEndpoint(t *testing.T, pieces []string) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		chunk := func(delta, finish, usage string) {
			fmt.Fprintf(w, `data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":%s,"finish_reason":%s}]%s}`+"\n\n", delta, finish, usage)
			w.(http.Flusher).Flush()
		}
		for i, p := range pieces {
			role := ""
			if i == 0 {
				role = `"role":"assistant",`
			}
			chunk(fmt.Sprintf(`{%s"content":%q}`, role, p), "null", "")
		}
		chunk("{}", `"stop"`, `,"usage":{"prompt_tokens":10,"completion_tokens":5,"total_tokens":15}`)
		fmt.Fprint(w, "data: [DONE]\n\n")
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/v1"
}

// TestStreamedChunksFromAProviderStream: a provider that streams its
// text (the OpenAI wire format over SSE) reaches the panel as one
// agent_message_chunk per piece, and the turn's text is not sent again
// whole.
func TestStreamedChunksFromAProviderStream(t *testing.T) {
	pieces := []string{"Hel", "lo, ", "world."}
	url := streamingEndpoint(t, pieces)
	c := newConfiguredClient(t, fmt.Sprintf("budget: { steps: 1 }\nmodel:\n  provider: openai-compatible\n  name: m\n  base_url: %s\n", url))
	ws := t.TempDir()
	c.call(methodInitialize, map[string]any{"protocolVersion": 1})
	sid := result(t, c.call(methodSessionNew, map[string]any{"cwd": ws, "mcpServers": []any{}}))["sessionId"].(string)
	c.call(methodSessionPrompt, map[string]any{"sessionId": sid, "prompt": []any{map[string]any{"type": "text", "text": "Say hello"}}})
	var chunks []string
	for _, u := range c.updates() {
		if u["sessionUpdate"] == "agent_message_chunk" {
			chunks = append(chunks, fmt.Sprint(u["content"].(map[string]any)["text"]))
		}
	}
	joined := strings.Join(chunks, "|")
	if !strings.Contains(joined, "Hel|lo, |world.|\n") {
		t.Errorf("the pieces did not arrive one chunk each, then the turn's end: %q", chunks)
	}
	if strings.Count(strings.Join(chunks, ""), "Hello, world.") != 1 {
		t.Errorf("the turn's text is not there exactly once: %q", chunks)
	}
}
