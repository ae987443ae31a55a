package contain

import (
	"context"
	"time"
)

// NetProxy is an egress proxy a command's network is confined to
// (Request.NetProxy): the host path of its unix socket and its loopback
// TCP address ("127.0.0.1:PORT").
type NetProxy struct {
	Socket string
	TCP    string
}

// NetVerdict is the run's answer for one connection the proxy is asked
// to make: Rule is the deciding rule's pattern ("" for none), Layer where
// it came from (docs/policy.md#the-network-proxy).
type NetVerdict struct {
	Allow               bool
	Rule, Layer, Reason string
}

// NetConn is one connection through the proxy, allowed or refused, once
// it ended: bytes up (sent by the command) and down, and how long it
// lasted.
type NetConn struct {
	Host                string
	Port                int
	Allowed             bool
	Rule, Layer, Reason string
	Up, Down            int64
	Duration            time.Duration
}

// NetJudge is what a run gives its proxy: Judge decides each connection
// (it may ask a person, so it may block), Record gets each one that ended.
// Both are called from the proxy's goroutines.
type NetJudge struct {
	Judge  func(ctx context.Context, host string, port int) NetVerdict
	Record func(NetConn)
}

// Egress is one run's proxy, started on the first Proxy call (a run that
// asks for no network starts nothing) and stopped by Close.
type Egress interface {
	Proxy(ctx context.Context) (*NetProxy, error)
	Close() error
}

// EgressProvider is implemented by a Sandbox that can confine a command's
// network to a proxy: Egress returns a run's proxy, not yet started,
// judged by j. A Sandbox without it gives no restricted network.
type EgressProvider interface {
	Egress(j NetJudge) Egress
}

// MechanismNetProxy names the mechanism a sandbox reports when it
// confined a command's network to Request.NetProxy.
const MechanismNetProxy = "net-proxy"

// Mechanism reports whether the named mechanism applied to the run.
func (r *Result) Mechanism(name string) bool {
	for _, m := range r.Mechanisms {
		if m.Name == name && m.State == "applied" {
			return true
		}
	}
	return false
}
