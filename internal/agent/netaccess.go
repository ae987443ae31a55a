package agent

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"sync"

	"github.com/ioh-lsp/ioh-lsp/internal/agent/contain"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/event"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/policy"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/tools"
)

// netAccess is a run's network: its egress proxy, started on the first
// command that needs it, and the judgement of each connection by the
// run's policy and approver (docs/policy.md#the-network-proxy). The proxy
// calls judge and record from its own goroutines; what they learn (the
// net_conn events, the approvals, "allow for this run" answers) waits in
// here until the run's goroutine takes it (drainNet), so nothing of the
// run's own state is touched from another goroutine.
type netAccess struct {
	egress   contain.Egress // nil: the sandbox confines no network to a proxy
	approver Approver
	run      string

	mu      sync.Mutex // one judgement at a time: a person is asked once per target
	pol     *policy.Policy
	step    int
	tool    string
	answers map[string]contain.NetVerdict // an ask's answer, for the rest of the run

	evMu     sync.Mutex
	events   []event.Payload
	remember []string // targets answered "allow for this run"
	sum      event.NetSummary
}

// newNetAccess gives the run a network access over its sandbox; the
// proxy is not started.
func (a *agentRun) newNetAccess() *netAccess {
	n := &netAccess{approver: a.h.opts.Approver, run: a.id, pol: a.pol, answers: map[string]contain.NetVerdict{}}
	if ep, ok := a.h.opts.Sandbox.(contain.EgressProvider); ok {
		n.egress = ep.Egress(contain.NetJudge{Judge: n.judge, Record: n.record})
	}
	return n
}

// netSandbox is the run's sandbox as its commands get it: a request with
// the network on (a check's network: true), or every request of the run
// tool when the policy may allow the network (all), reaches the network
// only through the run's proxy, never the whole network.
type netSandbox struct {
	contain.Sandbox
	n    *netAccess
	tool string
	all  bool
}

func (s netSandbox) Exec(ctx context.Context, req *contain.Request) (*contain.Result, error) {
	if s.n.egress == nil || !(req.Network || s.all) {
		return s.Sandbox.Exec(ctx, req)
	}
	p, err := s.n.egress.Proxy(ctx)
	if err != nil {
		return nil, err
	}
	s.n.mu.Lock()
	s.n.tool = s.tool
	s.n.mu.Unlock()
	r := *req
	r.Network, r.NetProxy = false, p
	return s.Sandbox.Exec(ctx, &r)
}

// sandboxFor is the sandbox a tool's or a check's commands run in.
func (a *agentRun) sandboxFor(tool string) contain.Sandbox {
	if a.h.opts.Sandbox == nil {
		return nil
	}
	if a.net == nil {
		a.net = a.newNetAccess()
	}
	return netSandbox{Sandbox: a.h.opts.Sandbox, n: a.net, tool: tool, all: tool == "run" && a.pol.MayAllow(policy.ActNet)}
}

// judge decides one connection: the policy's verdict on the net act
// host:port; an ask goes to the approver once per target for the run.
func (n *netAccess) judge(ctx context.Context, host string, port int) contain.NetVerdict {
	target := net.JoinHostPort(host, strconv.Itoa(port))
	n.mu.Lock()
	defer n.mu.Unlock()
	if v, ok := n.answers[target]; ok {
		return v
	}
	v := n.pol.Check(policy.ActNet, target)
	if v.Effect != policy.Ask {
		return netVerdict(v)
	}
	d, err := n.approver.ApproveAct(ctx, &ActRequest{Run: n.run, Step: n.step, Tool: n.tool, Verdict: v})
	if err != nil {
		d = Decision{Answer: Deny, Reason: err.Error(), By: "the approver, which failed"}
	}
	n.queue(&event.Approval{Tool: n.tool, Act: string(policy.ActNet), Target: target, Answer: string(d.Answer), Reason: d.Reason})
	out := contain.NetVerdict{Layer: "approver"}
	if v.Rule != nil {
		out.Rule = v.Rule.Pattern
	}
	switch d.Answer {
	case AllowOnce:
		out.Allow, out.Reason = true, "allowed when asked"
	case AllowRun:
		out.Allow, out.Layer, out.Reason = true, string(policy.LayerRemembered), "allowed for this run when asked"
		n.evMu.Lock()
		n.remember = append(n.remember, target)
		n.evMu.Unlock()
	case Defer:
		out.Reason = "it asks, and no one can answer in this run (the approver defers); allow it under network.allow in the user config (~/.config/ioh/config.yaml) or run with --approve ask"
	default:
		by := d.By
		if by == "" {
			by = "the user"
		}
		out.Reason = fmt.Sprintf("it asks, and %s denied it: %s", by, orNone(d.Reason))
	}
	n.answers[target] = out
	return out
}

// netVerdict is a policy verdict as the proxy takes it.
func netVerdict(v policy.Verdict) contain.NetVerdict {
	out := contain.NetVerdict{Allow: v.Effect == policy.Allow, Layer: string(v.Layer), Reason: v.Reason}
	if v.Rule != nil {
		out.Rule = v.Rule.Pattern
	}
	if !out.Allow && out.Reason == "" && v.Rule == nil {
		out.Reason = "no rule allows it (the network is denied by default)"
	}
	return out
}

func (n *netAccess) record(c contain.NetConn) {
	n.queue(&event.NetConn{Host: c.Host, Port: c.Port, Allowed: c.Allowed, Rule: c.Rule, Layer: c.Layer, Reason: c.Reason,
		BytesUp: c.Up, BytesDown: c.Down, DurationMS: c.Duration.Milliseconds()})
}

func (n *netAccess) queue(p event.Payload) {
	n.evMu.Lock()
	defer n.evMu.Unlock()
	n.events = append(n.events, p)
	if c, ok := p.(*event.NetConn); ok {
		n.sum.Add(c)
	}
}

// take returns what the proxy learnt since the last take.
func (n *netAccess) take() ([]event.Payload, []string) {
	n.evMu.Lock()
	defer n.evMu.Unlock()
	evs, rem := n.events, n.remember
	n.events, n.remember = nil, nil
	return evs, rem
}

// drainNet stores, on the run's goroutine, what the proxy learnt during
// the last call: its events go into the step, its "allow for this run"
// answers into the run's remembered rules; the proxy then judges by the
// run's current policy and step.
func (a *agentRun) drainNet(sc *stepCtx) {
	if a.net == nil {
		return
	}
	for _, e := range a.netEvents() {
		sc.add(e)
	}
}

// netEvents takes the proxy's news as events of the current step.
func (a *agentRun) netEvents() []event.Event {
	evs, rem := a.net.take()
	for _, target := range rem {
		if !a.rememberedExact(tools.Act{Act: policy.ActNet, Target: target}) {
			_ = a.remember(tools.Act{Act: policy.ActNet, Target: target})
		}
	}
	a.net.mu.Lock()
	a.net.pol, a.net.step = a.pol, a.totals.Steps+1
	a.net.mu.Unlock()
	out := make([]event.Event, 0, len(evs))
	for _, p := range evs {
		out = append(out, a.event(p))
	}
	return out
}

// closeNet stops the run's proxy (waiting for its last connections'
// records) and returns the events not yet stored and the run's network
// summary ("" when it made no connection). A run that goes on (a
// follow-up turn) gets a new one from its next setup.
func (a *agentRun) closeNet() ([]event.Event, string) {
	n := a.net
	if n == nil {
		return nil, ""
	}
	if n.egress != nil {
		n.egress.Close()
	}
	evs := a.netEvents()
	a.net = nil
	n.evMu.Lock()
	defer n.evMu.Unlock()
	return evs, n.sum.Text()
}
