package sandbox

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// testProxy is a tiny egress proxy for the sandbox's side of a
// restricted network: HTTP CONNECT and plain-HTTP forwarding on a unix
// socket in a private directory and on 127.0.0.1, as package netproxy
// serves them. A host it knows (name:port → address) is reached, any
// other is refused with 403 and recorded.
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
	dir, err := os.MkdirTemp("", "ioh-test-proxy-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	os.Chmod(dir, 0o700)
	p := &testProxy{hosts: hosts}
	p.Socket = filepath.Join(dir, "proxy.sock")
	uln, err := net.Listen("unix", p.Socket)
	if err != nil {
		t.Fatal(err)
	}
	tln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p.TCP = tln.Addr().String()
	srv := &http.Server{Handler: p, ReadHeaderTimeout: 5 * time.Second}
	go srv.Serve(uln) // ends at Close
	go srv.Serve(tln)
	t.Cleanup(func() { srv.Close() })
	return p
}

// deniedHosts are the hosts refused so far.
func (p *testProxy) deniedHosts() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string{}, p.denied...)
}

// judge returns the address to dial for host (host:port), "" if denied.
func (p *testProxy) judge(host string) string {
	if a, ok := p.hosts[host]; ok {
		return a
	}
	p.mu.Lock()
	p.denied = append(p.denied, host)
	p.mu.Unlock()
	return ""
}

func (p *testProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	host := r.Host
	if r.Method != http.MethodConnect {
		host = r.URL.Host
		if r.URL.Port() == "" {
			host += ":80"
		}
	}
	addr := p.judge(host)
	if addr == "" {
		http.Error(w, "denied by the test proxy: "+host, http.StatusForbidden)
		return
	}
	if r.Method == http.MethodConnect {
		p.tunnel(w, addr)
		return
	}
	out := r.Clone(r.Context())
	out.RequestURI = ""
	out.URL.Host = addr
	out.Header.Del("Proxy-Connection")
	res, err := http.DefaultTransport.(*http.Transport).RoundTrip(out)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	defer res.Body.Close()
	for k, v := range res.Header {
		w.Header()[k] = v
	}
	w.WriteHeader(res.StatusCode)
	io.Copy(w, res.Body)
}

// tunnel answers a CONNECT and relays to addr.
func (p *testProxy) tunnel(w http.ResponseWriter, addr string) {
	up, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	defer up.Close()
	c, buf, err := http.NewResponseController(w).Hijack()
	if err != nil {
		return
	}
	defer c.Close()
	io.WriteString(c, "HTTP/1.1 200 Connection established\r\n\r\n")
	done := make(chan struct{})
	go func() { io.Copy(up, buf); up.(*net.TCPConn).CloseWrite(); close(done) }()
	io.Copy(c, up)
	<-done
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
