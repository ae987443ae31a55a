package mcptool

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ioh-lsp/ioh-lsp/internal/agent/policy"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/tools"
)

type addIn struct {
	A int `json:"a"`
	B int `json:"b"`
}

// goServer is an MCP server built with the Go SDK, served over streamable
// HTTP by an httptest server; requests counts the HTTP requests it got.
func goServer(t *testing.T) (srvURL string, requests *atomic.Int64) {
	t.Helper()
	s := mcp.NewServer(&mcp.Implementation{Name: "calc", Version: "1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "add", Description: "Add two integers."}, func(_ context.Context, _ *mcp.CallToolRequest, in addIn) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: strconv.Itoa(in.A + in.B)}}}, nil, nil
	})
	release := make(chan struct{}) // lets a hung call go when the test ends
	s.AddTool(&mcp.Tool{Name: "hang", Description: "Never answers.", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(ctx context.Context, _ *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		select {
		case <-ctx.Done():
		case <-release:
		}
		return nil, errors.New("released")
	})
	s.AddTool(&mcp.Tool{Name: "big", Description: "A large answer.", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: strings.Repeat("x", 3*tools.MaxResult)}}}, nil
	})
	s.AddTool(&mcp.Tool{Name: "fails", Description: "A tool error.", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "no such record"}}}, nil
	})
	s.AddTool(&mcp.Tool{Name: "secret", Description: "Not exposed.", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "should not be reachable"}}}, nil
	})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil)
	requests = new(atomic.Int64)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	t.Cleanup(func() { close(release) }) // runs first
	return ts.URL + "/mcp", requests
}

func hostOf(t *testing.T, raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	h, p, _ := net.SplitHostPort(u.Host)
	return net.JoinHostPort(h, p)
}

// judge returns a Judge over rules in the user layer, as a run's policy.
func judge(t *testing.T, rules ...policy.Rule) Judge {
	t.Helper()
	p, err := policy.New(policy.Builtin(nil), policy.LayerRules{Layer: policy.LayerUser, Rules: rules})
	if err != nil {
		t.Fatal(err)
	}
	return p.Check
}

func deadline(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func byName(ts []tools.Tool) map[string]tools.Tool {
	m := map[string]tools.Tool{}
	for _, t := range ts {
		m[t.Spec().Name] = t
	}
	return m
}

func TestHTTPServerTools(t *testing.T) {
	ctx := deadline(t)
	u, _ := goServer(t)
	host := hostOf(t, u)
	m, err := NewManager([]Server{{Name: "calc", URL: u, Tools: []string{"add", "hang", "big", "fails", "missing"}, Timeout: 3 * time.Second}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	ts, warnings := m.Tools(ctx, judge(t, policy.Rule{Act: policy.ActNet, Effect: policy.Allow, Pattern: host}))
	got := byName(ts)
	var names []string
	for _, x := range ts {
		names = append(names, x.Spec().Name)
	}
	if diff := cmp.Diff(names, []string{"calc__add", "calc__big", "calc__fails", "calc__hang"}); diff != "" {
		t.Fatalf("exposed tools (-got +want):\n%s\nwarnings: %v", diff, warnings)
	}
	if len(warnings) != 1 || !strings.Contains(warnings[0], `lists no tool "missing"`) {
		t.Errorf("warnings = %q, want one about the missing tool", warnings)
	}
	add := got["calc__add"]
	if s := add.Spec(); !strings.Contains(s.Description, "Add two integers") || !strings.Contains(string(s.Schema), `"a"`) {
		t.Errorf("spec = %+v, want the server's description and schema", s)
	}
	acts, err := add.Acts(json.RawMessage(`{"a":2,"b":3}`))
	if err != nil {
		t.Fatal(err)
	}
	want := []tools.Act{{Act: policy.ActMCP, Target: "calc/add"}, {Act: policy.ActNet, Target: host}}
	if diff := cmp.Diff(acts, want); diff != "" {
		t.Errorf("acts (-got +want):\n%s", diff)
	}
	if _, err := add.Acts(json.RawMessage(`[1,2]`)); err == nil {
		t.Error("Acts accepted an array as arguments")
	}
	res, err := add.Call(ctx, json.RawMessage(`{"a":2,"b":3}`))
	if err != nil || res.IsError || res.Content != "5" {
		t.Fatalf("add = %+v, %v; want 5", res, err)
	}
	res, _ = got["calc__fails"].Call(ctx, nil)
	if !res.IsError || res.Content != "no such record" {
		t.Errorf("fails = %+v, want the tool's error as an error result", res)
	}
	res, _ = got["calc__big"].Call(ctx, nil)
	if len(res.Content) > tools.MaxResult+100 || !strings.Contains(res.Content, "more bytes not shown") {
		t.Errorf("big: %d bytes shown, want the result capped at %d: %.300s", len(res.Content), tools.MaxResult, res.Content)
	}
	// A hung call ends at the server's timeout with an error result, and
	// the server is usable again on the next call.
	res, err = got["calc__hang"].Call(ctx, nil)
	if err != nil || !res.IsError || !strings.Contains(res.Content, "no answer within 3s") {
		t.Fatalf("hang = %+v, %v; want an error result naming the timeout", res, err)
	}
	res, err = add.Call(ctx, json.RawMessage(`{"a":40,"b":2}`))
	if err != nil || res.IsError || res.Content != "42" {
		t.Fatalf("add after a hang = %+v, %v; want 42", res, err)
	}
}

// TestHTTPHostJudgedBeforeConnecting: a server whose host the policy does
// not allow outright is never contacted (and a control where it is).
func TestHTTPHostJudgedBeforeConnecting(t *testing.T) {
	ctx := deadline(t)
	u, requests := goServer(t)
	host := hostOf(t, u)
	srv := []Server{{Name: "calc", URL: u, Tools: []string{"*"}}}
	for _, c := range []struct {
		name  string
		rules []policy.Rule
		why   string
	}{
		{"default deny", nil, "net " + host + " is denied by the policy (layer default)"},
		{"ask", []policy.Rule{{Act: policy.ActNet, Effect: policy.Ask, Pattern: host}}, "not allowed outright (ask)"},
	} {
		m, err := NewManager(srv, Options{})
		if err != nil {
			t.Fatal(err)
		}
		ts, warnings := m.Tools(ctx, judge(t, c.rules...))
		m.Close()
		if len(ts) != 0 || len(warnings) != 1 || !strings.Contains(warnings[0], c.why) {
			t.Errorf("%s: tools %d, warnings %q; want none and %q", c.name, len(ts), warnings, c.why)
		}
	}
	if n := requests.Load(); n != 0 {
		t.Fatalf("the server got %d requests although its host was not allowed", n)
	}
	m, err := NewManager(srv, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	ts, _ := m.Tools(ctx, judge(t, policy.Rule{Act: policy.ActNet, Effect: policy.Allow, Pattern: host}))
	if len(ts) != 5 || requests.Load() == 0 {
		t.Fatalf("control: %d tools after %d requests; want all 5 tools once the host is allowed", len(ts), requests.Load())
	}
}

func TestServerValidate(t *testing.T) {
	bad := []struct {
		s    Server
		want string
	}{
		{Server{Name: "a__b", URL: "http://x"}, "without \"__\""},
		{Server{Name: "a b", URL: "http://x"}, "letters, digits"},
		{Server{Name: "a"}, "give a command (stdio) or a url"},
		{Server{Name: "a", URL: "http://x", Command: []string{"x"}}, "not both"},
		{Server{Name: "a", URL: "file:///etc/passwd"}, "not an http(s) URL"},
		{Server{Name: "a", URL: "http://x", Network: []string{"y"}}, "network is for stdio servers"},
		{Server{Name: "a", Command: []string{"x"}, Network: []string{"http://y/"}}, "must be host[:port]"},
	}
	for _, c := range bad {
		err := c.s.Validate()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Validate(%+v) = %v, want %q", c.s, err, c.want)
		}
	}
	if _, err := NewManager([]Server{{Name: "a", URL: "http://x"}, {Name: "a", URL: "http://y"}}, Options{}); err == nil || !strings.Contains(err.Error(), "configured twice") {
		t.Errorf("duplicate names: %v", err)
	}
	// No spawner: a stdio server is refused, never run uncontained.
	m, err := NewManager([]Server{{Name: "s", Command: []string{"true"}, Tools: []string{"*"}}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	ts, warnings := m.Tools(deadline(t), nil)
	if len(ts) != 0 || len(warnings) != 1 || !strings.Contains(warnings[0], "never run uncontained") {
		t.Errorf("stdio without a sandbox: %d tools, warnings %q", len(ts), warnings)
	}
}
