package main

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"sync"

	"github.com/ioh-lsp/ioh-lsp/internal/agent/config"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/policy"
	"github.com/ioh-lsp/ioh-lsp/internal/netproxy"
	"github.com/ioh-lsp/ioh-lsp/internal/sandbox"
)

// netAllow is the egress proxy of `sandbox run --net-allow`: every
// connection the command makes goes through it, judged by the user
// config's policy layers (network.allow and network.deny among them)
// with the --net-allow hosts as allow rules of the task layer above
// them. Deny wins as everywhere; an Ask verdict is a denial, as nobody is
// asked here. Each denial is printed on stderr as it happens, between
// the command's own writes there (Stderr).
type netAllow struct {
	proxy *netproxy.Proxy

	mu     sync.Mutex // held for each write to w, and for denied
	w      io.Writer
	denied int
}

// Write writes the command's stderr, so that a denial's line never lands
// inside one of its writes: the run's Spec.Stderr.
func (n *netAllow) Write(b []byte) (int, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.w.Write(b)
}

// startNetAllow starts the proxy for the --net-allow entries.
func startNetAllow(cfg *config.Config, entries []string, stderr io.Writer) (*netAllow, error) {
	rules, err := config.NetworkRules(policy.Allow, entries)
	if err != nil {
		return nil, fmt.Errorf("--net-allow: %w", err)
	}
	layers := append(cfg.PolicyLayers(), policy.LayerRules{Layer: policy.LayerTask, Rules: rules})
	pol, err := policy.New(layers...)
	if err != nil {
		return nil, fmt.Errorf("--net-allow: %w", err)
	}
	n := &netAllow{w: stderr}
	judge := func(_ context.Context, host string, port int) netproxy.Verdict {
		return netVerdict(pol.Check(policy.ActNet, host+":"+strconv.Itoa(port)))
	}
	if n.proxy, err = netproxy.Start(netproxy.Options{Judge: judge, Record: n.record}); err != nil {
		return nil, fmt.Errorf("--net-allow: %w", err)
	}
	return n, nil
}

// netVerdict is a policy verdict as the proxy takes it.
func netVerdict(v policy.Verdict) netproxy.Verdict {
	out := netproxy.Verdict{Allow: v.Effect == policy.Allow, Layer: string(v.Layer), Reason: v.Reason}
	if v.Rule != nil {
		out.Rule = v.Rule.Pattern
	}
	if v.Effect == policy.Ask {
		out.Reason = "the policy asks about it and `sandbox run` asks nobody: allow it with --net-allow or " + netproxy.ConfigHint
	}
	return out
}

// record prints a denied connection.
func (n *netAllow) record(c netproxy.Conn) {
	if c.Allowed {
		return
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	n.denied++
	rule := "no rule (nothing is allowed by default)"
	if c.Rule != "" {
		rule = fmt.Sprintf("rule %q of the %s layer", c.Rule, c.Layer)
	} else if c.Layer == netproxy.LayerProxy {
		rule = "the proxy itself"
	}
	fmt.Fprintf(n.w, "ioh-lsp sandbox run: network: denied %s:%d by %s: %s\n", c.Host, c.Port, rule, c.Reason)
}

// spec is the proxy as the sandbox takes it.
func (n *netAllow) spec() *sandbox.NetProxy {
	return &sandbox.NetProxy{Socket: n.proxy.Socket(), TCP: n.proxy.Addr()}
}

// close stops the proxy and says how many connections it denied.
func (n *netAllow) close() {
	n.proxy.Close()
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.denied > 0 {
		fmt.Fprintf(n.w, "ioh-lsp sandbox run: network: %d connection(s) denied; allow a host with --net-allow HOST or %s\n", n.denied, netproxy.ConfigHint)
	}
}
