package agent

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/ioh-lsp/ioh-lsp/internal/agent/contain"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/event"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/policy"
)

func netPolicy(t *testing.T, rules ...policy.Rule) *policy.Policy {
	t.Helper()
	p, err := policy.New(policy.Builtin(nil), policy.LayerRules{Layer: policy.LayerUser, Rules: rules})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func netRule(effect policy.Effect, pattern string) policy.Rule {
	return policy.Rule{Act: policy.ActNet, Effect: effect, Pattern: pattern}
}

// The policy decides each connection as the net act host:port: nothing
// by default, an allow rule opens a host, a deny wins over it.
func TestNetJudgeByPolicy(t *testing.T) {
	appr := &approver{act: Decision{Answer: AllowOnce}}
	n := &netAccess{approver: appr, run: "r-1", answers: map[string]contain.NetVerdict{},
		pol: netPolicy(t, netRule(policy.Allow, "*.example.com:443"), netRule(policy.Deny, "bad.example.com"))}
	for _, c := range []struct {
		host        string
		port        int
		allow       bool
		rule, layer string
	}{
		{"proxy.golang.org", 443, false, "", "default"},
		{"a.example.com", 443, true, "*.example.com:443", "user"},
		{"a.example.com", 80, false, "", "default"},
		{"bad.example.com", 443, false, "bad.example.com", "user"},
	} {
		v := n.judge(context.Background(), c.host, c.port)
		if v.Allow != c.allow || v.Rule != c.rule || v.Layer != c.layer {
			t.Errorf("%s:%d: %+v", c.host, c.port, v)
		}
		if !v.Allow && v.Rule == "" && !strings.Contains(v.Reason, "default for net is deny") {
			t.Errorf("%s:%d: the default denial's reason: %q", c.host, c.port, v.Reason)
		}
	}
	if len(appr.acts) != 0 {
		t.Errorf("the approver was asked %d times with no ask rule", len(appr.acts))
	}
}

// An ask-tier host asks the approver once for the run: "allow for this
// run" is kept (and handed to the run to remember), a deferring approver
// (no one to ask) denies with a reason naming network.allow.
func TestNetJudgeAsksOncePerHost(t *testing.T) {
	for _, c := range []struct {
		answer Answer
		allow  bool
		want   string
	}{
		{AllowRun, true, "allowed for this run"},
		{Defer, false, "network.allow"},
		{Deny, false, "the user denied it"},
	} {
		appr := &approver{act: Decision{Answer: c.answer}}
		n := &netAccess{approver: appr, run: "r-1", tool: "run", answers: map[string]contain.NetVerdict{},
			pol: netPolicy(t, netRule(policy.Ask, "staging.example.com"))}
		var wg sync.WaitGroup
		for range 3 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				v := n.judge(context.Background(), "staging.example.com", 443)
				if v.Allow != c.allow || !strings.Contains(v.Reason, c.want) {
					t.Errorf("%s: %+v", c.answer, v)
				}
			}()
		}
		wg.Wait()
		if len(appr.acts) != 1 || appr.acts[0].Verdict.Target != "staging.example.com:443" || appr.acts[0].Tool != "run" {
			t.Errorf("%s: asked %d times: %+v", c.answer, len(appr.acts), appr.acts)
		}
		evs, remember := n.take()
		if len(evs) != 1 || evs[0].(*event.Approval).Answer != string(c.answer) {
			t.Errorf("%s: events %+v", c.answer, evs)
		}
		if (c.answer == AllowRun) != (len(remember) == 1) {
			t.Errorf("%s: to remember %q", c.answer, remember)
		}
	}
}

// egressSandbox records the requests it gets and offers a proxy.
type egressSandbox struct {
	mu      sync.Mutex
	reqs    []contain.Request
	started int
}

func (s *egressSandbox) Exec(_ context.Context, req *contain.Request) (*contain.Result, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reqs = append(s.reqs, *req)
	return &contain.Result{Backend: "test"}, nil
}

func (s *egressSandbox) Egress(contain.NetJudge) contain.Egress { return (*fakeEgress)(s) }

type fakeEgress egressSandbox

func (e *fakeEgress) Proxy(context.Context) (*contain.NetProxy, error) {
	e.started++
	return &contain.NetProxy{Socket: "/tmp/p.sock", TCP: "127.0.0.1:1"}, nil
}
func (e *fakeEgress) Close() error { return nil }

// A check's network: true becomes the run's proxy, never the whole
// network; the run tool gets the proxy only when the policy may allow
// the network; a command without network starts nothing.
func TestNetSandboxConfinesToTheProxy(t *testing.T) {
	for _, c := range []struct {
		name    string
		rules   []policy.Rule
		tool    string
		network bool
		proxy   bool
	}{
		{"check with network", nil, "check", true, true},
		{"check without network", []policy.Rule{netRule(policy.Allow, "*")}, "check", false, false},
		{"run, nothing allowed", []policy.Rule{netRule(policy.Deny, "*")}, "run", false, false},
		{"run, a host allowed", []policy.Rule{netRule(policy.Allow, "proxy.golang.org")}, "run", false, true},
		{"run, a host asks", []policy.Rule{netRule(policy.Ask, "*")}, "run", false, true},
	} {
		sb := &egressSandbox{}
		f := newFixture(t, nil, nil)
		a := &agentRun{h: f.h, id: "r-1", pol: netPolicy(t, c.rules...)}
		a.h.opts.Sandbox = sb
		if _, err := a.sandboxFor(c.tool).Exec(context.Background(), &contain.Request{Shell: "true", Network: c.network}); err != nil {
			t.Fatal(err)
		}
		got := sb.reqs[0]
		if got.Network {
			t.Errorf("%s: the command got the whole network", c.name)
		}
		if (got.NetProxy != nil) != c.proxy || (sb.started > 0) != c.proxy {
			t.Errorf("%s: proxy %+v, started %d; want proxy %v", c.name, got.NetProxy, sb.started, c.proxy)
		}
	}
	// The control: the sandbox itself, unwrapped, is handed the whole network.
	sb := &egressSandbox{}
	sb.Exec(context.Background(), &contain.Request{Shell: "true", Network: true})
	if !sb.reqs[0].Network {
		t.Fatal("the control request lost its network")
	}
}
