package sandbox

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ioh-lsp/ioh-lsp/internal/netproxy"
	"golang.org/x/sys/unix"
)

// testProxy is the run's egress proxy as the wiring starts it (package
// netproxy: HTTP CONNECT, plain-HTTP forwarding and SOCKS5 on a unix
// socket in a private directory and on 127.0.0.1) with a judge that
// allows exactly the hosts it was given (name:port → address on the
// host's loopback) and the addresses they resolve to, and records every
// host it refused.
type testProxy struct {
	NetProxy
	hosts map[string]string

	mu     sync.Mutex
	denied []string
}

// startTestProxy starts a proxy that reaches each host name:port of
// hosts at its address.
func startTestProxy(t *testing.T, hosts map[string]string) *testProxy {
	t.Helper()
	p := &testProxy{hosts: hosts}
	np, err := netproxy.Start(netproxy.Options{Judge: p.judge, Resolve: p.resolve, Record: p.record, Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { np.Close() })
	p.Socket, p.TCP = np.Socket(), np.Addr()
	return p
}

// deniedHosts are the hosts refused so far, as host:port.
func (p *testProxy) deniedHosts() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string{}, p.denied...)
}

// judge allows a host given, or an address one of them has, at its port.
func (p *testProxy) judge(_ context.Context, host string, port int) netproxy.Verdict {
	hp := net.JoinHostPort(host, strconv.Itoa(port))
	if _, ok := p.hosts[hp]; ok {
		return netproxy.Verdict{Allow: true, Rule: hp, Layer: "test"}
	}
	for _, addr := range p.hosts {
		if addr == hp {
			return netproxy.Verdict{Allow: true, Rule: hp, Layer: "test"}
		}
	}
	return netproxy.Verdict{Layer: "test", Reason: "not one of the test's hosts"}
}

// resolve gives a host's address.
func (p *testProxy) resolve(_ context.Context, host string) ([]netip.Addr, error) {
	for hp, addr := range p.hosts {
		if h, _, _ := net.SplitHostPort(hp); h == host {
			ap, err := netip.ParseAddrPort(addr)
			if err != nil {
				return nil, err
			}
			return []netip.Addr{ap.Addr()}, nil
		}
	}
	return nil, fmt.Errorf("no such host %s", host)
}

func (p *testProxy) record(c netproxy.Conn) {
	if c.Allowed {
		return
	}
	p.mu.Lock()
	p.denied = append(p.denied, net.JoinHostPort(c.Host, strconv.Itoa(c.Port)))
	p.mu.Unlock()
}

func init() {
	// proxyget URL: GET URL with the proxy the environment names (a TLS
	// server's certificate is not checked: the test's own), print the
	// body; an answer other than 200 fails.
	moreHelpers["proxyget"] = func(a []string) error {
		tr := &http.Transport{Proxy: http.ProxyFromEnvironment, TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, a[0], nil)
		if err != nil {
			return err
		}
		res, err := tr.RoundTrip(req)
		if err != nil {
			return err
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		os.Stdout.Write(b)
		if res.StatusCode != http.StatusOK {
			return fmt.Errorf("%s: %s", a[0], res.Status)
		}
		return nil
	}
	// dnsask ADDR: a DNS query over UDP to ADDR gets an answer, whatever
	// it says.
	moreHelpers["dnsask"] = func(a []string) error {
		c, err := net.DialTimeout("udp", a[0], 3*time.Second)
		if err != nil {
			return err
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(3 * time.Second))
		q := []byte{0x12, 0x34, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0, 7, 'e', 'x', 'a', 'm', 'p', 'l', 'e', 3, 'c', 'o', 'm', 0, 0, 1, 0, 1}
		if _, err := c.Write(q); err != nil {
			return err
		}
		_, err = c.Read(make([]byte, 512))
		return err
	}
	// fastopen ADDR: a TCP Fast Open sendto(2), which connects without
	// connect(2), reaches ADDR (the echo server answers).
	moreHelpers["fastopen"] = func(a []string) error {
		ap, err := netip.ParseAddrPort(a[0])
		if err != nil {
			return err
		}
		fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM, 0)
		if err != nil {
			return err
		}
		defer unix.Close(fd)
		tv := unix.Timeval{Sec: 3}
		unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv)
		if err := unix.Sendto(fd, []byte("ping"), unix.MSG_FASTOPEN, &unix.SockaddrInet4{Port: int(ap.Port()), Addr: ap.Addr().As4()}); err != nil {
			return err
		}
		buf := make([]byte, 4)
		if _, err := unix.Read(fd, buf); err != nil {
			return err
		}
		return nil
	}
	// dial ADDR: a TCP connection to ADDR is accepted.
	moreHelpers["dial"] = func(a []string) error {
		c, err := net.DialTimeout("tcp", a[0], 3*time.Second)
		if err != nil {
			return err
		}
		return c.Close()
	}
}

// markerServer is an HTTP server (useTLS: HTTPS) on the host's loopback
// answering every request with marker; it returns its address.
func markerServer(t *testing.T, marker string, useTLS bool) string {
	t.Helper()
	h := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, marker) })
	srv := httptest.NewServer(h)
	if useTLS {
		srv.Close()
		srv = httptest.NewTLSServer(h)
	}
	t.Cleanup(srv.Close)
	return srv.Listener.Addr().String()
}

// hostIPv4 is an address of this machine's other than loopback, "" if it
// has none.
func hostIPv4() string {
	addrs, _ := net.InterfaceAddrs()
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && n.IP.To4() != nil && !n.IP.IsLoopback() {
			return n.IP.String()
		}
	}
	return ""
}

// hostResolver is the first nameserver of /etc/resolv.conf as ip:53, ""
// if it names none.
func hostResolver() string {
	b, _ := os.ReadFile("/etc/resolv.conf")
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) == 2 && f[0] == "nameserver" {
			if a, err := netip.ParseAddr(f[1]); err == nil && a.Is4() {
				return net.JoinHostPort(f[1], "53")
			}
		}
	}
	return ""
}

// portOf is addr's port.
func portOf(addr string) string {
	_, p, _ := net.SplitHostPort(addr)
	return p
}

// hostsFor maps name:port of each server's port to the server.
func hostsFor(names map[string]string) map[string]string {
	m := map[string]string{}
	for name, addr := range names {
		m[name+":"+portOf(addr)] = addr
	}
	return m
}

// proxyEnvFor is the environment a client outside the sandbox needs to
// use p the way proxyEnv points the command at it.
func proxyEnvFor(p NetProxy) []string {
	_, port, _ := strings.Cut(p.TCP, ":")
	var n int
	fmt.Sscan(port, &n)
	return proxyEnv(n)
}
