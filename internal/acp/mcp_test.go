package acp

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ioh-lsp/ioh-lsp/internal/agent"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/event"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/mcptool"
	"github.com/ioh-lsp/ioh-lsp/internal/sandbox/sandboxtest"
)

// calcServer is an MCP server built with the Go SDK over streamable HTTP
// (httptest); calls counts the times its add tool ran.
func calcServer(t *testing.T) (endpoint, host string, calls *atomic.Int64) {
	t.Helper()
	type addIn struct {
		A int `json:"a"`
		B int `json:"b"`
	}
	calls = new(atomic.Int64)
	s := mcp.NewServer(&mcp.Implementation{Name: "calc", Version: "1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "add", Description: "Add two integers."}, func(_ context.Context, _ *mcp.CallToolRequest, in addIn) (*mcp.CallToolResult, any, error) {
		calls.Add(1)
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: strconv.Itoa(in.A + in.B)}}}, nil, nil
	})
	ts := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
	t.Cleanup(ts.Close)
	u, err := url.Parse(ts.URL)
	if err != nil {
		t.Fatal(err)
	}
	h, p, _ := net.SplitHostPort(u.Host)
	return ts.URL + "/mcp", net.JoinHostPort(h, p), calls
}

// mcpWorld gives the test its own HOME, state and user config, whose
// policy lets the agent reach host (an HTTP MCP server's host is a net
// act, denied by default); it returns a workspace with a task whose check
// passes and a cassette that calls calc__add and finishes.
func mcpWorld(t *testing.T, host string) (ws, task, cassette string) {
	t.Helper()
	for _, v := range []string{"HOME", "XDG_CONFIG_HOME", "XDG_STATE_HOME", "IOH_STATE_DIR"} {
		t.Setenv(v, t.TempDir())
	}
	cfg := filepath.Join(os.Getenv("XDG_CONFIG_HOME"), "ioh", "config.yaml")
	ws = t.TempDir()
	task = filepath.Join(ws, "fix.ioh.yaml")
	cassette = filepath.Join(t.TempDir(), "cassette.json")
	for p, s := range map[string]string{
		// The client's MCP servers start only in a trusted workspace.
		cfg:  "trusted: [" + ws + "]\npolicy:\n  rules:\n    - {act: net, effect: allow, pattern: \"" + host + "\"}\n",
		task: "version: 1\ngoal: Add two and three\nverify:\n  checks:\n    - { name: ok, run: [\"true\"] }\n",
		cassette: `{"version":1,"turns":[
 {"tool_calls":[{"name":"calc__add","arguments":{"a":2,"b":3}}],"usage":{"input_tokens":100,"output_tokens":10}},
 {"tool_calls":[{"name":"finish","arguments":{"summary":"added"}}],"usage":{"input_tokens":100,"output_tokens":10}}]}`,
	} {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return ws, task, cassette
}

// TestClientMCPServerIsWired: an HTTP MCP server the client passes in
// session/new gives the agent its tools; the call is an mcp act asked
// through session/request_permission, and allowed, its result reaches the
// panel. Rejected (the control), the server never runs the tool. The
// prompt's _meta.traceparent reaches the run's run_started event; a
// malformed one on session/new is dropped.
func TestClientMCPServerIsWired(t *testing.T) {
	endpoint, host, calls := calcServer(t)
	ws, task, cassette := mcpWorld(t, host)
	const traceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	servers := []any{map[string]any{"type": "http", "name": "calc", "url": endpoint, "headers": []any{}}}

	for _, answer := range []string{optAllowOnce, optRejectOnce} {
		var mu sync.Mutex
		var asked []map[string]any
		var started []*event.RunStarted
		c := newClientSink(t, cassette, func(e event.Event) {
			if p, ok := e.Payload.(*event.RunStarted); ok {
				mu.Lock()
				started = append(started, p)
				mu.Unlock()
			}
		}, func(p map[string]any) any {
			mu.Lock()
			asked = append(asked, p["toolCall"].(map[string]any))
			mu.Unlock()
			if strings.HasSuffix(p["toolCall"].(map[string]any)["toolCallId"].(string), "/change") {
				return selected(optAllowOnce)
			}
			return selected(answer)
		})
		init := c.call(methodInitialize, map[string]any{"protocolVersion": 1})
		if caps := init["result"].(map[string]any)["agentCapabilities"].(map[string]any)["mcpCapabilities"].(map[string]any); caps["http"] != true {
			t.Fatalf("mcpCapabilities = %v, want http", caps)
		}
		meta := map[string]any{"traceparent": "00-not-a-trace"}
		r := c.call(methodSessionNew, map[string]any{"cwd": ws, "mcpServers": servers, "_meta": meta})
		sid := r["result"].(map[string]any)["sessionId"].(string)
		prompt := taskPrompt(sid, task)
		if answer == optAllowOnce {
			prompt["_meta"] = map[string]any{"traceparent": traceparent, "tracestate": "vendor=1"}
		}
		before := calls.Load()
		r = c.call(methodSessionPrompt, prompt)
		// A run whose only act was rejected ends as a refusal.
		wantStop := map[string]string{optAllowOnce: stopEndTurn, optRejectOnce: stopRefusal}[answer]
		if got := r["result"].(map[string]any)["stopReason"]; got != wantStop {
			t.Fatalf("%s: stop reason %v: %v", answer, got, r)
		}
		mu.Lock()
		if len(asked) == 0 || asked[0]["title"] != "calc__add wants to mcp calc/add" || asked[0]["kind"] != kindFetch {
			t.Fatalf("%s: asked %v, want the mcp act calc/add first", answer, asked)
		}
		for _, a := range asked {
			if strings.Contains(a["title"].(string), "net") {
				t.Errorf("%s: the allowed net act was asked: %v", answer, a["title"])
			}
		}
		if len(started) != 1 {
			t.Fatalf("%s: %d run_started events", answer, len(started))
		}
		gotTP, gotTS := started[0].Traceparent, started[0].Tracestate
		mu.Unlock()
		result := mcpResult(c.updates(), asked[0]["toolCallId"].(string))
		ran := calls.Load() - before
		if answer == optAllowOnce {
			if result != "completed: 5" || ran != 1 {
				t.Errorf("allowed: result %q, the server ran add %d times; want completed: 5, once", result, ran)
			}
			if gotTP != traceparent || gotTS != "vendor=1" {
				t.Errorf("run_started traceparent %q tracestate %q, want the prompt's", gotTP, gotTS)
			}
		} else {
			if ran != 0 || strings.Contains(result, "5") {
				t.Errorf("rejected: result %q, the server ran add %d times; want no call", result, ran)
			}
			if gotTP != "" {
				t.Errorf("a malformed traceparent reached the run: %q", gotTP)
			}
		}
	}
}

// mcpResult is the status and text of the last update of a tool call.
func mcpResult(updates []map[string]any, id string) string {
	out := ""
	for _, u := range updates {
		if u["toolCallId"] != id || u["sessionUpdate"] != "tool_call_update" {
			continue
		}
		b, _ := json.Marshal(u["content"])
		var content []struct {
			Content struct {
				Text string `json:"text"`
			} `json:"content"`
		}
		json.Unmarshal(b, &content)
		if len(content) > 0 {
			out = u["status"].(string) + ": " + content[0].Content.Text
		}
	}
	return out
}

func TestMCPServersConvert(t *testing.T) {
	raw := func(s string) []json.RawMessage {
		var out []json.RawMessage
		if err := json.Unmarshal([]byte(s), &out); err != nil {
			t.Fatal(err)
		}
		return out
	}
	got, warnings, err := mcpServers(raw(`[
 {"name":"GitHub MCP","command":"/usr/bin/gh-mcp","args":["stdio","--ro"],"env":[{"name":"LOG_LEVEL","value":"info"},{"name":"GITHUB_TOKEN","value":"ghp_x"}]},
 {"type":"stdio","name":"fs","command":"/bin/fs","args":[],"env":[]},
 {"type":"http","name":"docs","url":"https://docs.example/mcp","headers":[{"name":"Authorization","value":"Bearer x"}]}]`))
	if err != nil {
		t.Fatal(err)
	}
	want := []mcptool.Server{
		{Name: "GitHub-MCP", Command: []string{"/usr/bin/gh-mcp", "stdio", "--ro"}, Dir: "/usr/bin", Env: map[string]string{"LOG_LEVEL": "info", "GITHUB_TOKEN": "ghp_x"}, Tools: []string{"*"}},
		{Name: "fs", Command: []string{"/bin/fs"}, Dir: "/bin", Tools: []string{"*"}},
		{Name: "docs", URL: "https://docs.example/mcp", Tools: []string{"*"}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("converted:\n%+v\nwant\n%+v", got, want)
	}
	if len(warnings) != 1 || !strings.Contains(warnings[0], "Authorization") || strings.Contains(warnings[0], "Bearer") {
		t.Errorf("warnings %q, want one naming the dropped header (not its value)", warnings)
	}
	for name, bad := range map[string]string{
		"no name":     `[{"command":"/x"}]`,
		"no command":  `[{"name":"a"}]`,
		"sse":         `[{"type":"sse","name":"a","url":"https://a/sse","headers":[]}]`,
		"bad url":     `[{"type":"http","name":"a","url":"ftp://a","headers":[]}]`,
		"both same":   `[{"name":"a b","command":"/x"},{"name":"a-b","command":"/y"}]`,
		"not object":  `[1]`,
		"env non-str": `[{"name":"a","command":"/x","env":[{"name":"A","value":1}]}]`,
	} {
		_, _, err := mcpServers(raw(bad))
		var re *RPCError
		if !errors.As(err, &re) || re.Code != codeInvalidParams {
			t.Errorf("%s: got %v, want invalid params", name, err)
		}
	}
	// The command's directory is readable, unless that shows the home.
	home := t.TempDir()
	t.Setenv("HOME", home)
	for cmd, want := range map[string]string{
		"/opt/mcp/bin/srv":         "/opt/mcp/bin",
		home + "/.local/bin/srv":   home + "/.local/bin",
		home + "/srv":              "",
		filepath.Dir(home) + "/x":  "",
		"/srv":                     "",
		"srv":                      "",
		"/opt/mcp/../mcp/bin/srv2": "/opt/mcp/bin",
	} {
		if got := installDir(cmd); got != want {
			t.Errorf("installDir(%q) = %q, want %q", cmd, got, want)
		}
	}
	if n := mcpName("a__b c/d" + strings.Repeat("x", 40)); n != "a_b-c-d"+strings.Repeat("x", 25) {
		t.Errorf("mcpName = %q", n)
	}
}

func TestTraceMeta(t *testing.T) {
	const tp = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	for _, c := range []struct {
		params string
		want   agent.TraceContext
		ok     bool
	}{
		{`{"_meta":{"traceparent":"` + tp + `","tracestate":"a=1"}}`, agent.TraceContext{Traceparent: tp, Tracestate: "a=1"}, true},
		{`{"_meta":{"traceparent":"` + tp + `","tracestate":7}}`, agent.TraceContext{Traceparent: tp}, true},
		{`{"_meta":{"traceparent":42}}`, agent.TraceContext{}, false},
		{`{"_meta":null}`, agent.TraceContext{}, false},
		{`{"sessionId":"s-1"}`, agent.TraceContext{}, false},
		{`[1]`, agent.TraceContext{}, false},
	} {
		got, ok := traceMeta(json.RawMessage(c.params))
		if got != c.want || ok != c.ok {
			t.Errorf("%s: %+v %v, want %+v %v", c.params, got, ok, c.want, c.ok)
		}
	}
	// withTrace: the prompt's context wins over the session's; a malformed
	// one leaves the context as it was (the run starts its own trace).
	base := context.Background()
	sess := &agent.TraceContext{Traceparent: tp}
	if withTrace(base, json.RawMessage(`{}`), nil) != base {
		t.Error("no trace context changed the context")
	}
	if withTrace(base, json.RawMessage(`{}`), sess) == base {
		t.Error("the session's trace context was not used")
	}
	if withTrace(base, json.RawMessage(`{"_meta":{"traceparent":"00-zz"}}`), nil) != base {
		t.Error("a malformed traceparent was kept")
	}
	if withTrace(base, json.RawMessage(`{"_meta":{"traceparent":"00-00000000000000000000000000000000-00f067aa0ba902b7-01"}}`), nil) != base {
		t.Error("the all-zero trace id was kept")
	}
}

// TestClientStdioMCPServerContained: a stdio server the client passes runs
// in the sandbox and its tool answers (the control); the same server with
// a secret-looking env entry is refused by the sandbox, so its tool is
// missing and the call fails without an answer.
func TestClientStdioMCPServerContained(t *testing.T) {
	exe := serverBinary(t)
	ws, task, cassette := mcpWorld(t, "127.0.0.1:1")
	for _, secret := range []bool{false, true} {
		env := []any{map[string]any{"name": stdioServerEnv, "value": "1"}}
		if secret {
			env = append(env, map[string]any{"name": "GITHUB_TOKEN", "value": "ghp_not_a_token"})
		}
		servers := []any{map[string]any{"name": "calc", "command": exe, "args": []any{}, "env": env}}
		var mu sync.Mutex
		var asked []map[string]any
		c := newClient(t, cassette, func(p map[string]any) any {
			mu.Lock()
			asked = append(asked, p["toolCall"].(map[string]any))
			mu.Unlock()
			return selected(optAllowOnce)
		})
		c.call(methodInitialize, map[string]any{"protocolVersion": 1})
		r := c.call(methodSessionNew, map[string]any{"cwd": ws, "mcpServers": servers})
		sid := r["result"].(map[string]any)["sessionId"].(string)
		r = c.call(methodSessionPrompt, taskPrompt(sid, task))
		if r["result"] == nil {
			t.Fatalf("secret=%v: prompt: %v", secret, r)
		}
		mu.Lock()
		var callID string
		for _, a := range asked {
			if a["title"] == "calc__add wants to mcp calc/add" {
				callID = a["toolCallId"].(string)
			}
		}
		mu.Unlock()
		var result string
		if callID != "" {
			result = mcpResult(c.updates(), callID)
		}
		switch {
		case !secret && result != "completed: 5":
			t.Errorf("control: the contained stdio server's add gave %q (asked %v), want completed: 5", result, asked)
		case secret && (callID != "" || strings.Contains(result, "5")):
			t.Errorf("with a secret-looking env entry the server ran: asked %v, result %q", asked, result)
		}
	}
}

// serverBinary is this test binary (an MCP server under stdioServerEnv)
// where the sandbox's read view sees it: /tmp, where go test builds it,
// is private inside the sandbox, and an ACP client names a server by an
// absolute command path.
func serverBinary(t *testing.T) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := sandboxtest.Dir(t)
	dst := filepath.Join(dir, "calc-mcp")
	if os.Link(exe, dst) == nil {
		return dst
	}
	b, err := os.ReadFile(exe)
	if err == nil {
		err = os.WriteFile(dst, b, 0o755)
	}
	if err != nil {
		t.Fatal(err)
	}
	return dst
}
