package acp

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ioh-lsp/ioh-lsp/internal/agent/event"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/trace"
	"github.com/ioh-lsp/ioh-lsp/internal/wire"
)

const statsBefore = "package stats\n\nfunc Mean(xs []float64) float64 {\n\tsum := 0.0\n\tfor _, x := range xs {\n\t\tsum += x\n\t}\n\treturn sum / float64(len(xs)-1)\n}\n"

var statsAfter = strings.Replace(statsBefore, "float64(len(xs)-1)", "float64(len(xs))", 1)

// client is a test's ACP client over pipes to a real Server whose
// sessions get real harnesses (wire.NewHarness: the trace store, the OS
// sandbox, a replay cassette). onAsk answers session/request_permission.
type client struct {
	t     *testing.T
	ctx   context.Context
	in    *io.PipeWriter
	mu    sync.Mutex
	wait  map[float64]chan map[string]any
	notes []map[string]any
	onAsk func(params map[string]any) any
	done  chan error
	id    float64
	// asked are the methods of the agent's requests to the client, in
	// order.
	asked []string
	// store is the last engine's trace store.
	store *trace.Store
}

func newClient(t *testing.T, cassette string, onAsk func(map[string]any) any) *client {
	t.Helper()
	return newClientSink(t, cassette, nil, onAsk)
}

// newClientSink is newClient whose engines also send their events to
// also (nil: none), and get the session's MCP servers as cmd/ioh-lsp
// hands them over.
func newClientSink(t *testing.T, cassette string, also func(event.Event), onAsk func(map[string]any) any) *client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	c := &client{t: t, ctx: ctx, in: inW, wait: map[float64]chan map[string]any{}, onAsk: onAsk, done: make(chan error, 1)}
	log := slog.New(slog.DiscardHandler)
	if testing.Verbose() {
		log = slog.New(slog.NewTextHandler(t.Output(), nil))
	}
	srv := New(Options{Logger: log, Version: "test", StateDir: t.TempDir(),
		NewEngine: func(ctx context.Context, r EngineRequest) (*Engine, error) {
			sink := r.Sink
			if also != nil {
				sink = event.SinkFunc(func(e event.Event) { also(e); r.Sink.Emit(e) })
			}
			e, err := wire.NewHarness(ctx, wire.Options{Root: r.Root, Approver: r.Approver, Sink: sink, Logger: r.Logger,
				Overrides: wire.Overrides{Cassette: cassette}, MCPServers: r.MCPServers})
			if err != nil {
				return nil, err
			}
			c.mu.Lock()
			c.store = e.Store
			c.mu.Unlock()
			return &Engine{Harness: e.Harness, Root: e.Root, Close: e.Close}, nil
		}})
	go func() { c.done <- srv.Serve(ctx, inR, outW); outW.Close() }()
	go c.read(outR)
	t.Cleanup(func() {
		inW.Close()
		select {
		case err := <-c.done:
			if err != nil {
				t.Errorf("serve: %v", err)
			}
		case <-time.After(30 * time.Second):
			t.Error("the server did not stop after stdin closed")
		}
	})
	return c
}

func (c *client) read(r io.Reader) {
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			c.t.Errorf("agent wrote a line that is not JSON: %q", sc.Text())
			continue
		}
		if method, _ := m["method"].(string); method != "" && m["id"] != nil {
			c.mu.Lock()
			c.asked = append(c.asked, method)
			c.mu.Unlock()
		}
		switch {
		case m["method"] == methodSessionUpdate:
			c.mu.Lock()
			c.notes = append(c.notes, m["params"].(map[string]any)["update"].(map[string]any))
			c.mu.Unlock()
		case m["method"] == methodRequestPermission:
			go func() {
				ans := c.onAsk(m["params"].(map[string]any))
				c.write(map[string]any{"jsonrpc": "2.0", "id": m["id"], "result": ans})
			}()
		case m["id"] != nil:
			c.mu.Lock()
			ch := c.wait[m["id"].(float64)]
			c.mu.Unlock()
			if ch != nil {
				ch <- m
			}
		}
	}
}

func (c *client) write(v any) {
	b, _ := json.Marshal(v)
	if _, err := c.in.Write(append(b, '\n')); err != nil {
		c.t.Errorf("write: %v", err)
	}
}

// call sends a request and waits for its answer under the test deadline.
func (c *client) call(method string, params any) map[string]any {
	c.t.Helper()
	c.mu.Lock()
	c.id++
	id := c.id
	ch := make(chan map[string]any, 1)
	c.wait[id] = ch
	c.mu.Unlock()
	c.write(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	select {
	case m := <-ch:
		return m
	case <-c.ctx.Done():
		c.mu.Lock()
		defer c.mu.Unlock()
		c.t.Fatalf("%s: no answer before the deadline; updates so far: %v", method, c.notes)
	}
	return nil
}

func (c *client) updates() []map[string]any {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]map[string]any(nil), c.notes...)
}

func selected(id string) any {
	return map[string]any{"outcome": map[string]any{"outcome": "selected", "optionId": id}}
}

// workspaceWithTask is a workspace with stats.go, a task file whose check
// greps the fix, and a cassette that reads, runs a command (Ask-tier),
// edits and finishes.
func workspaceWithTask(t *testing.T) (ws, task, cassette string) {
	t.Helper()
	ws = t.TempDir()
	task = filepath.Join(ws, "fix.ioh.yaml")
	cassette = filepath.Join(t.TempDir(), "cassette.json")
	files := map[string]string{
		filepath.Join(ws, "stats.go"): statsBefore,
		task:                          "version: 1\ngoal: Fix Mean\nverify:\n  checks:\n    - { name: divisor, run: [\"grep\", \"-q\", \"float64(len(xs))$\", \"stats.go\"] }\n",
		cassette: `{"version":1,"turns":[
 {"text":"Reading.","tool_calls":[{"name":"read_file","arguments":{"path":"stats.go"}}],"usage":{"input_tokens":100,"output_tokens":10}},
 {"tool_calls":[{"name":"run","arguments":{"argv":["wc","-l","stats.go"]}}],"usage":{"input_tokens":100,"output_tokens":10}},
 {"tool_calls":[{"name":"edit_file","arguments":{"path":"stats.go","old":"float64(len(xs)-1)","new":"float64(len(xs))"}}],"usage":{"input_tokens":100,"output_tokens":10}},
 {"tool_calls":[{"name":"finish","arguments":{"summary":"fixed"}}],"usage":{"input_tokens":100,"output_tokens":10}}]}`,
	}
	writeFiles(t, files)
	return ws, task, cassette
}

// writeFiles writes each path's content.
func writeFiles(t *testing.T, files map[string]string) {
	t.Helper()
	for p, s := range files {
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func readFile(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func openSession(t *testing.T, c *client, ws string) string {
	t.Helper()
	c.call(methodInitialize, map[string]any{"protocolVersion": 1})
	r := c.call(methodSessionNew, map[string]any{"cwd": ws, "mcpServers": []any{}})
	res, ok := r["result"].(map[string]any)
	if !ok {
		t.Fatalf("session/new: %v", r)
	}
	return res["sessionId"].(string)
}

func taskPrompt(sid, task string) map[string]any {
	return map[string]any{"sessionId": sid, "prompt": []any{map[string]any{"type": "resource_link", "uri": "file://" + filepath.ToSlash(task), "name": "fix.ioh.yaml"}}}
}

// TestServerWritesOnlyAfterAllow: the act and the change are asked; the
// file is unchanged while the change's permission is pending, and changed
// once it is allowed.
func TestServerWritesOnlyAfterAllow(t *testing.T) {
	ws, task, cassette := workspaceWithTask(t)
	file := filepath.Join(ws, "stats.go")
	var asked []string
	var onDisk string
	var mu sync.Mutex
	c := newClient(t, cassette, func(p map[string]any) any {
		tc := p["toolCall"].(map[string]any)
		mu.Lock()
		defer mu.Unlock()
		asked = append(asked, tc["title"].(string))
		if strings.HasSuffix(tc["toolCallId"].(string), "/change") {
			onDisk = readFile(t, file)
		}
		return selected(optAllowOnce)
	})
	sid := openSession(t, c, ws)
	r := c.call(methodSessionPrompt, taskPrompt(sid, task))
	if got := r["result"].(map[string]any)["stopReason"]; got != stopEndTurn {
		t.Fatalf("stop reason %v: %v", got, r)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(asked) != 2 || asked[0] != "run wants to exec wc -l stats.go" || !strings.HasPrefix(asked[1], "Write the change to 1 file(s): stats.go") {
		t.Fatalf("asked: %q", asked)
	}
	if onDisk != statsBefore {
		t.Errorf("the file changed before the change was allowed:\n%s", onDisk)
	}
	if got := readFile(t, file); got != statsAfter {
		t.Errorf("after allow:\n%s", got)
	}
	var kinds []string
	for _, u := range c.updates() {
		kinds = append(kinds, fmt.Sprint(u["sessionUpdate"]))
	}
	for _, want := range []string{"plan", "agent_message_chunk", "usage_update", "tool_call", "tool_call_update"} {
		if !strings.Contains(strings.Join(kinds, " "), want) {
			t.Errorf("no %s among the updates: %v", want, kinds)
		}
	}
}

// TestServerCancelDuringChangePermission: session/cancel while the change
// waits for permission ends the prompt as cancelled with the disk
// untouched; the session then takes another prompt.
func TestServerCancelDuringChangePermission(t *testing.T) {
	ws, task, cassette := workspaceWithTask(t)
	var c *client
	var sid string
	c = newClient(t, cassette, func(p map[string]any) any {
		if strings.HasSuffix(p["toolCall"].(map[string]any)["toolCallId"].(string), "/change") {
			c.write(map[string]any{"jsonrpc": "2.0", "method": methodSessionCancel, "params": map[string]any{"sessionId": sid}})
			return map[string]any{"outcome": map[string]any{"outcome": "cancelled"}}
		}
		return selected(optAllowRun)
	})
	sid = openSession(t, c, ws)
	r := c.call(methodSessionPrompt, taskPrompt(sid, task))
	if got := r["result"].(map[string]any)["stopReason"]; got != stopCancelled {
		t.Fatalf("stop reason %v, want cancelled", got)
	}
	if got := readFile(t, filepath.Join(ws, "stats.go")); got != statsBefore {
		t.Errorf("a cancelled change was written:\n%s", got)
	}
	// A second prompt in a session with none in flight is accepted; one
	// for an unknown session is not.
	if r := c.call(methodSessionPrompt, map[string]any{"sessionId": "s-00", "prompt": []any{map[string]any{"type": "text", "text": "x"}}}); r["error"] == nil {
		t.Errorf("prompt to an unknown session: %v", r)
	}
}

// TestServeEndsWithItsContext: a cancelled context ends Serve even while
// it waits on a reader that never speaks (SIGTERM while the editor is
// silent).
func TestServeEndsWithItsContext(t *testing.T) {
	inR, inW := io.Pipe()
	defer inW.Close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- New(Options{}).Serve(ctx, inR, io.Discard) }()
	cancel()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("Serve still reading after its context ended")
	}
}
