// Package netproxy is the egress proxy of a run: the only way out of a
// sandbox whose network is restricted. It listens on a unix socket in a
// private directory (bound into the linux tier's sandbox) and on a
// loopback TCP port (the landlock tier's only permitted destination),
// speaks HTTP CONNECT, plain-HTTP forwarding (absolute-URI requests) and
// SOCKS5, and judges every connection before it dials: the caller's Judge
// decides the host, and the proxy itself resolves names, dials only the
// addresses it checked and never reaches an IP literal or a loopback,
// link-local or private address unless a rule names that address exactly
// (docs/policy.md#the-network-proxy). It imports no other layer of the
// module.
package netproxy

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// Verdict is the Judge's answer for one host and port.
type Verdict struct {
	Allow bool
	// Rule is the pattern of the deciding rule (a host[:port] glob), ""
	// when no rule matched (the default).
	Rule string
	// Layer names where the deciding rule came from ("user", "default",
	// "remembered", ...); the proxy's own refusals say "proxy".
	Layer  string
	Reason string
}

// Conn is the record of one connection, allowed or refused.
type Conn struct {
	Host    string
	Port    int
	Allowed bool
	Rule    string
	Layer   string
	Reason  string
	// Up counts the bytes the client sent to the destination, Down those
	// it received from it (payload only: a CONNECT's or SOCKS's own
	// handshake is not counted).
	Up, Down int64
	Duration time.Duration
}

// LayerProxy is the Layer of the proxy's own refusals: an address no rule
// names exactly, a name that does not resolve, a malformed request.
const LayerProxy = "proxy"

// ConfigHint names where a user allows a host; every refusal says it.
const ConfigHint = "network.allow in ~/.config/ioh/config.yaml"

// Options configure a proxy. Judge is required.
type Options struct {
	// Judge decides a host (a name, or an address in its literal form)
	// and port. It may block (ask a person); its context ends when the
	// client goes away or the proxy closes.
	Judge func(ctx context.Context, host string, port int) Verdict
	// Record, when set, gets every connection once it ended. It is called
	// from the connection's goroutine.
	Record func(Conn)
	// Resolve looks a name up; nil: the system resolver.
	Resolve func(ctx context.Context, host string) ([]netip.Addr, error)
	// Dial connects to one checked address ("ip:port"); nil: a net.Dialer.
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
	// Dir is where the private socket directory is made; "": os.TempDir
	// (or /tmp when that path is too long for a socket).
	Dir string
}

// Proxy is a running proxy. Close it.
type Proxy struct {
	opts   Options
	dir    string
	socket string
	unixL  net.Listener
	tcpL   net.Listener
	ctx    context.Context
	cancel context.CancelFunc

	mu     sync.Mutex
	conns  map[net.Conn]struct{}
	closed bool
	wg     sync.WaitGroup
}

// Start listens on a fresh unix socket and on 127.0.0.1:0 and serves until
// Close.
func Start(opts Options) (*Proxy, error) {
	if opts.Judge == nil {
		return nil, errors.New("netproxy: Options.Judge is required")
	}
	if opts.Resolve == nil {
		opts.Resolve = func(ctx context.Context, host string) ([]netip.Addr, error) {
			return net.DefaultResolver.LookupNetIP(ctx, "ip", host)
		}
	}
	if opts.Dial == nil {
		d := &net.Dialer{Timeout: 30 * time.Second}
		opts.Dial = d.DialContext
	}
	dir, err := privateDir(opts.Dir)
	if err != nil {
		return nil, err
	}
	p := &Proxy{opts: opts, dir: dir, socket: filepath.Join(dir, "proxy.sock"), conns: map[net.Conn]struct{}{}}
	if p.unixL, err = net.Listen("unix", p.socket); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("netproxy: listen on %s: %w", p.socket, err)
	}
	if p.tcpL, err = net.Listen("tcp", "127.0.0.1:0"); err != nil {
		p.unixL.Close()
		os.RemoveAll(dir)
		return nil, fmt.Errorf("netproxy: listen on 127.0.0.1: %w", err)
	}
	p.ctx, p.cancel = context.WithCancel(context.Background())
	p.wg.Add(2)
	go p.serve(p.unixL)
	go p.serve(p.tcpL)
	return p, nil
}

// maxSocketPath is the longest unix socket path every platform takes.
const maxSocketPath = 100

// privateDir makes a 0700 directory for the socket, under base or the
// temporary directory, falling back to /tmp when the path would be too
// long for a socket address.
func privateDir(base string) (string, error) {
	if base == "" {
		base = os.TempDir()
		if len(base)+len("/ioh-proxy-0123456789/proxy.sock") > maxSocketPath {
			base = "/tmp"
		}
	}
	dir, err := os.MkdirTemp(base, "ioh-proxy-")
	if err != nil {
		return "", fmt.Errorf("netproxy: socket directory: %w", err)
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		os.RemoveAll(dir)
		return "", fmt.Errorf("netproxy: socket directory: %w", err)
	}
	return dir, nil
}

// Socket is the host path of the proxy's unix socket.
func (p *Proxy) Socket() string { return p.socket }

// Addr is the proxy's loopback TCP address, "127.0.0.1:PORT".
func (p *Proxy) Addr() string { return p.tcpL.Addr().String() }

// Close stops listening, ends every open connection, waits for their
// records and removes the socket directory.
func (p *Proxy) Close() error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil
	}
	p.closed = true
	for c := range p.conns {
		c.Close()
	}
	p.mu.Unlock()
	p.cancel()
	p.unixL.Close()
	p.tcpL.Close()
	p.wg.Wait()
	return os.RemoveAll(p.dir)
}

func (p *Proxy) serve(l net.Listener) {
	defer p.wg.Done()
	for {
		c, err := l.Accept()
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			return
		}
		if !p.track(c, true) {
			c.Close()
			return
		}
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			defer p.track(c, false)
			defer c.Close()
			p.handle(c)
		}()
	}
}

// track adds or removes an open connection; false once the proxy closed.
func (p *Proxy) track(c net.Conn, add bool) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !add {
		delete(p.conns, c)
		return true
	}
	if p.closed {
		return false
	}
	p.conns[c] = struct{}{}
	return true
}
