package sandboxexec

import (
	"context"
	"fmt"
	"net/netip"
	"sync"

	"github.com/ioh-lsp/ioh-lsp/internal/agent/contain"
	"github.com/ioh-lsp/ioh-lsp/internal/netproxy"
	"github.com/ioh-lsp/ioh-lsp/internal/sandbox"
)

var _ contain.EgressProvider = (*Adapter)(nil)

// Egress returns a run's egress proxy, judged by j; it starts on the
// first command that needs it (docs/policy.md#the-network-proxy).
func (a *Adapter) Egress(j contain.NetJudge) contain.Egress {
	return &egress{judge: j, resolve: a.resolve}
}

// egress is a netproxy started lazily, once.
type egress struct {
	judge   contain.NetJudge
	resolve func(ctx context.Context, host string) ([]netip.Addr, error) // nil: the system's

	mu     sync.Mutex
	proxy  *netproxy.Proxy
	closed bool
}

// Proxy starts the proxy on the first call and returns its endpoints; a
// failed start is returned and tried again on the next call.
func (e *egress) Proxy(context.Context) (*contain.NetProxy, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return nil, fmt.Errorf("network proxy: the run's proxy is closed")
	}
	if e.proxy == nil {
		p, err := netproxy.Start(netproxy.Options{Judge: e.judgeConn, Record: e.record, Resolve: e.resolve})
		if err != nil {
			return nil, fmt.Errorf("network proxy: %w", err)
		}
		e.proxy = p
	}
	return &contain.NetProxy{Socket: e.proxy.Socket(), TCP: e.proxy.Addr()}, nil
}

// Close stops the proxy (if it started), ending its connections.
func (e *egress) Close() error {
	e.mu.Lock()
	p := e.proxy
	e.closed, e.proxy = true, nil
	e.mu.Unlock()
	if p == nil {
		return nil
	}
	return p.Close()
}

func (e *egress) judgeConn(ctx context.Context, host string, port int) netproxy.Verdict {
	if e.judge.Judge == nil {
		return netproxy.Verdict{Layer: "default", Reason: "the run judges no network"}
	}
	v := e.judge.Judge(ctx, host, port)
	return netproxy.Verdict{Allow: v.Allow, Rule: v.Rule, Layer: v.Layer, Reason: v.Reason}
}

func (e *egress) record(c netproxy.Conn) {
	if e.judge.Record != nil {
		e.judge.Record(contain.NetConn{Host: c.Host, Port: c.Port, Allowed: c.Allowed, Rule: c.Rule, Layer: c.Layer,
			Reason: c.Reason, Up: c.Up, Down: c.Down, Duration: c.Duration})
	}
}

// specProxy is a request's proxy as the sandbox takes it.
func specProxy(p *contain.NetProxy) *sandbox.NetProxy {
	if p == nil {
		return nil
	}
	return &sandbox.NetProxy{Socket: p.Socket, TCP: p.TCP}
}
