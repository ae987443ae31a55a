package wire

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/ioh-lsp/ioh-lsp/internal/agent"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/contract"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/event"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/policy"
)

// netApprover allows every net ask for the run and denies everything
// else, recording the asks.
type netApprover struct {
	mu   sync.Mutex
	asks []string
}

func (a *netApprover) ApproveAct(_ context.Context, r *agent.ActRequest) (agent.Decision, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.asks = append(a.asks, string(r.Verdict.Act)+" "+r.Verdict.Target)
	if r.Verdict.Act == policy.ActNet {
		return agent.Decision{Answer: agent.AllowRun}, nil
	}
	return agent.Decision{Answer: agent.Deny, Reason: "not in this test"}, nil
}

func (a *netApprover) ApproveChange(context.Context, *agent.Proposal) (agent.Decision, error) {
	return agent.Decision{Answer: agent.Defer}, nil
}

// netRun drives a replay run whose model calls run with each shell line
// and finishes; the contract's one check is check (network: true). It
// returns the run tool's results in order and the events.
func netRun(t *testing.T, config string, lines []string, check string, ask agent.Approver) ([]string, []event.Event, *agent.Result) {
	t.Helper()
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("no curl on this machine")
	}
	ws := t.TempDir()
	os.WriteFile(filepath.Join(ws, "a.txt"), []byte("x\n"), 0o644)
	cfgHome := t.TempDir()
	os.MkdirAll(filepath.Join(cfgHome, "ioh"), 0o755)
	os.WriteFile(filepath.Join(cfgHome, "ioh", "config.yaml"), []byte(config), 0o644)
	var turns []string
	for _, l := range lines {
		turns = append(turns, fmt.Sprintf(`{"tool_calls":[{"name":"run","arguments":{"shell":%q}}]}`, l))
	}
	turns = append(turns, `{"tool_calls":[{"name":"write_file","arguments":{"path":"b.txt","content":"y\n"}}]}`,
		`{"tool_calls":[{"name":"finish","arguments":{"summary":"s"}}]}`)
	cassette := filepath.Join(ws, "c.json")
	os.WriteFile(cassette, []byte(`{"version":1,"turns":[`+strings.Join(turns, ",")+`]}`), 0o644)
	env := map[string]string{"IOH_STATE_DIR": t.TempDir(), "HOME": t.TempDir(), "XDG_CONFIG_HOME": cfgHome, "PATH": os.Getenv("PATH")}
	var mu sync.Mutex
	var events []event.Event
	ctx := mcpCtx(t)
	eng, err := NewHarness(ctx, Options{
		Root: ws, Getenv: func(k string) string { return env[k] }, Environ: func() []string { return nil },
		Overrides: Overrides{Cassette: cassette}, Approver: ask,
		Sink: event.SinkFunc(func(e event.Event) { mu.Lock(); events = append(events, e); mu.Unlock() }),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	c := &contract.Contract{Version: 1, Goal: "fetch", Retry: contract.DefaultRetry()}
	if check != "" {
		c.Verify.Checks = []contract.Check{{Name: "fetch", Shell: check, Network: true}}
	}
	run, err := eng.Harness.Start(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	res := run.Wait()
	mu.Lock()
	defer mu.Unlock()
	var results []string
	for _, e := range events {
		if p, ok := e.Payload.(*event.ToolResult); ok && p.Tool == "run" {
			results = append(results, p.Content)
		}
	}
	return results, append([]event.Event(nil), events...), res
}

// helloHTTP serves a greeting on addr (a loopback "IP:0") and returns
// its port.
func helloHTTP(t *testing.T, addr string) string {
	t.Helper()
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "hello through the proxy\n")
	}))
	l, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	srv.Listener.Close()
	srv.Listener = l
	srv.Start()
	t.Cleanup(srv.Close)
	u, _ := url.Parse(srv.URL)
	return u.Port()
}

// curlVia fetches url through the sandbox's proxy (HTTP_PROXY), also for
// loopback addresses, which NO_PROXY would otherwise send direct.
func curlVia(url string) string {
	return "curl -sS --max-time 10 --noproxy '' -x \"$HTTP_PROXY\" " + url
}

// A run whose configuration allows a host: the run tool and a check with
// network: true reach it through the proxy (and the check, bypassing the
// proxy, does not reach it directly), a host no rule allows is
// refused with a 403 naming network.allow, an ask-tier host asks the
// approver once for the run, and each connection is a net_conn event,
// summed up in the outcome.
func TestNetworkThroughTheProxyInARun(t *testing.T) {
	port := helloHTTP(t, "127.0.0.1:0")
	askPort := helloHTTP(t, "127.0.0.3:0")
	config := fmt.Sprintf(`network:
  allow: ["127.0.0.1:%s"]
policy:
  rules:
    - {act: exec, effect: allow, pattern: "sh -c *"}
    - {act: net, effect: ask, pattern: "127.0.0.3:*"}
`, port)
	ask := &netApprover{}
	results, events, res := netRun(t, config, []string{
		curlVia("http://127.0.0.1:" + port + "/"),
		curlVia("http://127.0.0.2:" + port + "/"),
		curlVia("http://127.0.0.3:"+askPort+"/") + "; " + curlVia("http://127.0.0.3:"+askPort+"/"),
	}, curlVia("http://127.0.0.1:"+port+"/")+" | grep -q 'hello through the proxy' && ! curl -sS --max-time 5 --noproxy '*' http://127.0.0.1:"+port+"/", ask)
	if len(results) != 3 {
		t.Fatalf("run results %q (outcome %s: %v)", results, res.Outcome, res.Err)
	}
	if !strings.Contains(results[0], "hello through the proxy") || !strings.Contains(results[0], "network: only through the run's proxy") {
		t.Errorf("allowed host: %s", results[0])
	}
	if !strings.Contains(results[1], "127.0.0.2:"+port+" refused") || !strings.Contains(results[1], "network.allow") {
		t.Errorf("a host no rule allows: %s", results[1])
	}
	if res.Report == nil || !res.Report.Passed {
		t.Errorf("the check with network: true did not reach the allowed host: %+v (%v)", res.Report, res.Err)
	}
	if !strings.Contains(results[2], "hello through the proxy\nhello through the proxy") {
		t.Errorf("the ask-tier host, allowed for the run: %s", results[2])
	}
	if len(ask.asks) != 1 || ask.asks[0] != "net 127.0.0.3:"+askPort {
		t.Errorf("asks %q, want one for the ask-tier host", ask.asks)
	}
	var conns []*event.NetConn
	var outcome *event.Outcome
	for _, e := range events {
		switch p := e.Payload.(type) {
		case *event.NetConn:
			conns = append(conns, p)
		case *event.Outcome:
			outcome = p
		}
	}
	var allowed, refused int
	for _, c := range conns {
		if c.Allowed {
			allowed++
			if c.BytesDown == 0 || c.BytesUp == 0 {
				t.Errorf("an allowed connection counted no bytes: %+v", c)
			}
		} else {
			refused++
		}
	}
	// run: 127.0.0.1, two of 127.0.0.3 (asked once); the check: 127.0.0.1 (red phase off).
	if allowed != 4 || refused != 1 {
		t.Errorf("connections %d allowed, %d refused, want 4 and 1: %+v", allowed, refused, conns)
	}
	if outcome == nil || !strings.Contains(outcome.Network, "network: 4 connections allowed") || !strings.Contains(outcome.Network, "1 refused: 127.0.0.2:"+port) {
		t.Errorf("outcome's network summary: %+v", outcome)
	}
	if outcome != nil && res.Network != outcome.Network {
		t.Errorf("the result's network summary %q differs from the outcome's %q", res.Network, outcome.Network)
	}
}

// With nothing allowed, the run tool gets no proxy (nothing starts, no
// proxy variable is set) and no network.
func TestNoNetworkWithoutAllowRules(t *testing.T) {
	port := helloHTTP(t, "127.0.0.1:0")
	results, events, _ := netRun(t, "policy:\n  rules:\n    - {act: exec, effect: allow, pattern: \"sh -c *\"}\n",
		[]string{"echo proxy=${HTTP_PROXY:-none}; curl -sS --max-time 5 http://127.0.0.1:" + port + "/ || echo no network"}, "", &netApprover{})
	if len(results) != 1 || !strings.Contains(results[0], "proxy=none") || !strings.Contains(results[0], "no network") {
		t.Fatalf("results %q", results)
	}
	for _, e := range events {
		if _, ok := e.Payload.(*event.NetConn); ok {
			t.Errorf("a connection was recorded: %+v", e)
		}
	}
}
