package netproxy

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// rules is a test Judge: exact host or host:port patterns, or "*"; the
// first match decides; no match denies as the policy's default does.
type rules []struct {
	pattern string
	allow   bool
}

func (r rules) judge(_ context.Context, host string, port int) Verdict {
	for _, x := range r {
		if x.pattern == "*" || x.pattern == host || x.pattern == net.JoinHostPort(host, strconv.Itoa(port)) ||
			strings.Trim(x.pattern, "[]") == host {
			return Verdict{Allow: x.allow, Rule: x.pattern, Layer: "user"}
		}
	}
	return Verdict{Layer: "default", Reason: "no rule allows it"}
}

func allow(p ...string) rules {
	var r rules
	for _, s := range p {
		r = append(r, struct {
			pattern string
			allow   bool
		}{s, true})
	}
	return r
}

// world is a proxy with a fake name table and a record of what it did.
type world struct {
	*Proxy
	mu      sync.Mutex
	records []Conn
	dialled []string
	names   map[string][]netip.Addr
}

// start runs a proxy judged by r; names resolve through table (names not in
// it do not resolve); redirect, when set, is where every dial really goes
// (the address asked for is noted in dialled).
func start(t *testing.T, r rules, table map[string]string, redirect string) *world {
	t.Helper()
	w := &world{names: map[string][]netip.Addr{}}
	for n, as := range table {
		for _, a := range strings.Split(as, ",") {
			w.names[n] = append(w.names[n], netip.MustParseAddr(a))
		}
	}
	var d net.Dialer
	p, err := Start(Options{
		Judge: r.judge,
		Record: func(c Conn) {
			w.mu.Lock()
			w.records = append(w.records, c)
			w.mu.Unlock()
		},
		Resolve: func(_ context.Context, host string) ([]netip.Addr, error) {
			if a, ok := w.names[host]; ok {
				return append([]netip.Addr(nil), a...), nil
			}
			return nil, fmt.Errorf("no such host %s", host)
		},
		Dial: func(ctx context.Context, network, addr string) (net.Conn, error) {
			w.mu.Lock()
			w.dialled = append(w.dialled, addr)
			w.mu.Unlock()
			if redirect != "" {
				addr = redirect
			}
			return d.DialContext(ctx, network, addr)
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	w.Proxy = p
	t.Cleanup(func() { p.Close() })
	return w
}

// lastRecord waits for the n-th record (records come when a connection
// ends).
func (w *world) record(t *testing.T, n int) Conn {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		w.mu.Lock()
		if len(w.records) >= n {
			c := w.records[n-1]
			w.mu.Unlock()
			return c
		}
		w.mu.Unlock()
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("no record %d of the connection", n)
	return Conn{}
}

// connect opens a CONNECT tunnel to target through the proxy's TCP port;
// it returns the connection and the proxy's response.
func connect(t *testing.T, proxyAddr, network, target string) (net.Conn, *bufio.Reader, *http.Response) {
	t.Helper()
	c, err := net.Dial(network, proxyAddr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	c.SetDeadline(time.Now().Add(10 * time.Second))
	fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", target, target)
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, &http.Request{Method: http.MethodConnect})
	if err != nil {
		t.Fatal(err)
	}
	return c, br, resp
}

func body(t *testing.T, r *http.Response) string {
	t.Helper()
	b, err := io.ReadAll(r.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// echoCount is a server that reads until its client's end of input, then
// answers how many bytes it read and closes: it only ever answers when a
// half-close reached it.
func echoCount(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				n, _ := io.Copy(io.Discard, c)
				fmt.Fprintf(c, "read %d\n", n)
			}()
		}
	}()
	return l.Addr().String()
}
