package netproxy

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"
)

func testServer(t *testing.T) (*httptest.Server, string) {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		fmt.Fprintf(w, "hello %s %s %d", r.Host, r.URL.Path, len(b))
	}))
	t.Cleanup(srv.Close)
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	return srv, port
}

func proxyClient(addr string) *http.Client {
	u := &url.URL{Scheme: "http", Host: addr}
	return &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(u)}, Timeout: 10 * time.Second}
}

// A name allowed by a rule and an address rule for the loopback test
// server is reached through plain-HTTP forwarding; a name no rule allows
// is answered 403 with a body naming the host and the config key.
func TestPlainHTTPAllowedAndDenied(t *testing.T) {
	_, port := testServer(t)
	w := start(t, allow("registry.test", "127.0.0.1:"+port), map[string]string{"registry.test": "127.0.0.1", "other.test": "127.0.0.1"}, "")
	c := proxyClient(w.Addr())

	resp, err := c.Post("http://registry.test:"+port+"/mod", "text/plain", strings.NewReader("abc"))
	if err != nil {
		t.Fatal(err)
	}
	if got := body(t, resp); resp.StatusCode != 200 || got != "hello registry.test:"+port+" /mod 3" {
		t.Fatalf("allowed: %d %q", resp.StatusCode, got)
	}
	rec := w.record(t, 1)
	if !rec.Allowed || rec.Host != "registry.test" || rec.Rule != "registry.test" || rec.Up == 0 || rec.Down == 0 {
		t.Fatalf("allowed record: %+v", rec)
	}

	resp, err = c.Get("http://other.test:" + port + "/mod")
	if err != nil {
		t.Fatal(err)
	}
	got := body(t, resp)
	if resp.StatusCode != http.StatusForbidden || !strings.Contains(got, "other.test:"+port) || !strings.Contains(got, "network.allow") || !strings.Contains(got, "default") {
		t.Fatalf("denied: %d %q", resp.StatusCode, got)
	}
	if rec := w.record(t, 2); rec.Allowed || rec.Layer != "default" || rec.Up != 0 {
		t.Fatalf("denied record: %+v", rec)
	}
	if len(w.dialled) != 1 {
		t.Fatalf("a denied host was dialled: %v", w.dialled)
	}

	// A Host header naming a host no rule allows is not sent on to the
	// allowed address: the judged name is.
	conn, err := net.Dial("tcp", w.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "GET http://registry.test:%s/h HTTP/1.1\r\nHost: other.test:%s\r\n\r\n", port, port)
	resp, err = http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := body(t, resp); got != "hello registry.test:"+port+" /h 0" {
		t.Fatalf("with another Host header: %q", got)
	}
}

// An https client refused its CONNECT tunnel sees only the status line:
// it names the host and network.allow too.
func TestRefusedTunnelSaysWhyInItsStatus(t *testing.T) {
	w := start(t, allow("registry.test"), map[string]string{"registry.test": "127.0.0.1", "other.test": "127.0.0.1"}, "")
	_, err := proxyClient(w.Addr()).Get("https://other.test:8443/")
	if err == nil || !strings.Contains(err.Error(), "other.test:8443") || !strings.Contains(err.Error(), "network.allow in ~/.config/ioh/config.yaml") {
		t.Fatalf("the client's error: %v", err)
	}
}

// A deny rule wins and the refusal names it.
func TestDenyRuleNamed(t *testing.T) {
	_, port := testServer(t)
	r := rules{{"registry.test", false}, {"*", true}}
	w := start(t, r, map[string]string{"registry.test": "127.0.0.1"}, "")
	resp, err := proxyClient(w.Addr()).Get("http://registry.test:" + port + "/")
	if err != nil {
		t.Fatal(err)
	}
	got := body(t, resp)
	if resp.StatusCode != 403 || !strings.Contains(got, "`deny net registry.test` of the user layer") || !strings.Contains(got, "remove it") {
		t.Fatalf("%d %q", resp.StatusCode, got)
	}
}

// CONNECT tunnels to an allowed name, over the unix socket as well as the
// TCP port; a denied one is 403 and nothing is dialled.
func TestConnectBothListeners(t *testing.T) {
	srv, port := testServer(t)
	w := start(t, allow("registry.test", "127.0.0.1:"+port), map[string]string{"registry.test": "127.0.0.1", "other.test": "127.0.0.1"}, "")
	for _, l := range []struct{ network, addr string }{{"tcp", w.Addr()}, {"unix", w.Socket()}} {
		c, br, resp := connect(t, l.addr, l.network, "registry.test:"+port)
		if resp.StatusCode != 200 {
			t.Fatalf("%s: CONNECT: %s", l.network, resp.Status)
		}
		fmt.Fprintf(c, "GET /t HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
		r, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := body(t, r); got != "hello x /t 0" {
			t.Fatalf("%s: through the tunnel: %q", l.network, got)
		}
		_, _, resp = connect(t, l.addr, l.network, "other.test:"+port)
		if got := body(t, resp); resp.StatusCode != 403 || !strings.Contains(got, "other.test") {
			t.Fatalf("%s: denied CONNECT: %s %q", l.network, resp.Status, got)
		}
	}
	_ = srv
	if len(w.dialled) != 2 {
		t.Fatalf("dialled %v, want the two allowed tunnels", w.dialled)
	}
}

// Addresses: an IP literal, loopback, private, link-local and mapped forms
// are refused without a rule naming the address, even under "allow *";
// the same address named exactly is reached.
func TestAddressesNeedAnExactRule(t *testing.T) {
	echo := echoCount(t)
	_, port, _ := net.SplitHostPort(echo)
	for _, target := range []string{
		"127.0.0.1:" + port, "[::ffff:127.0.0.1]:" + port, "[::1]:" + port,
		"10.1.2.3:80", "192.168.1.1:80", "169.254.169.254:80", "[fe80::1]:80",
		"100.64.0.1:80", "0.0.0.0:80", "[64:ff9b::7f00:1]:80", "93.184.216.34:443",
		"127.1:" + port, "0x7f000001:" + port, "2130706433:" + port,
	} {
		w := start(t, allow("*"), nil, echo)
		_, _, resp := connect(t, w.Addr(), "tcp", target)
		if got := body(t, resp); resp.StatusCode != 403 || !strings.Contains(got, "network.allow") {
			t.Errorf("%s under allow *: %s %q", target, resp.Status, got)
		}
		if len(w.dialled) != 0 {
			t.Errorf("%s: dialled %v", target, w.dialled)
		}
	}
	for _, c := range []struct{ rule, target, dialled string }{
		{"127.0.0.1:" + port, "127.0.0.1:" + port, "127.0.0.1:" + port},
		{"127.0.0.1", "[::ffff:127.0.0.1]:" + port, "127.0.0.1:" + port},
		{"[::1]:" + port, "[::1]:" + port, "[::1]:" + port},
		{"93.184.216.34", "93.184.216.34:443", "93.184.216.34:443"},
		{"169.254.169.254:80", "169.254.169.254:80", "169.254.169.254:80"},
	} {
		w := start(t, allow(c.rule), nil, echo)
		_, _, resp := connect(t, w.Addr(), "tcp", c.target)
		if resp.StatusCode != 200 || len(w.dialled) != 1 || w.dialled[0] != c.dialled {
			t.Errorf("%s with rule %s: %s, dialled %v", c.target, c.rule, resp.Status, w.dialled)
		}
	}
}

// A name that is allowed but resolves to a private or loopback address
// (DNS rebinding) is refused, also when only one of its addresses is; a
// rule naming the address opens it; a public address is dialled as
// resolved, never by name.
func TestResolvedAddressesJudged(t *testing.T) {
	echo := echoCount(t)
	for _, addrs := range []string{"10.0.0.5", "127.0.0.1", "93.184.216.34,127.0.0.1", "::1", "169.254.169.254"} {
		w := start(t, allow("rebind.test"), map[string]string{"rebind.test": addrs}, echo)
		_, _, resp := connect(t, w.Addr(), "tcp", "rebind.test:443")
		got := body(t, resp)
		if resp.StatusCode != 403 || !strings.Contains(got, "rebind.test resolves to") {
			t.Errorf("rebind.test → %s: %s %q", addrs, resp.Status, got)
		}
		if len(w.dialled) != 0 {
			t.Errorf("rebind.test → %s: dialled %v", addrs, w.dialled)
		}
	}
	w := start(t, allow("rebind.test", "10.0.0.5:443"), map[string]string{"rebind.test": "10.0.0.5"}, echo)
	if _, _, resp := connect(t, w.Addr(), "tcp", "rebind.test:443"); resp.StatusCode != 200 || w.dialled[0] != "10.0.0.5:443" {
		t.Errorf("named private address: %s %v", resp.Status, w.dialled)
	}
	w = start(t, allow("public.test"), map[string]string{"public.test": "93.184.216.34"}, echo)
	c, _, resp := connect(t, w.Addr(), "tcp", "PUBLIC.test.:443")
	if resp.StatusCode != 200 || w.dialled[0] != "93.184.216.34:443" {
		t.Errorf("public name: %s %v", resp.Status, w.dialled)
	}
	c.Close()
	if rec := w.record(t, 1); rec.Host != "public.test" {
		t.Errorf("the record names %q, want the normalised name", rec.Host)
	}
}

// A tunnel passes a half-close on: the server reads to its end of input
// and only then answers, so the answer arrives only if the client's
// CloseWrite reached it; the record counts the bytes each way.
func TestConnectHalfCloseAndCounts(t *testing.T) {
	echo := echoCount(t)
	w := start(t, allow("127.0.0.1"), nil, "")
	c, br, resp := connect(t, w.Addr(), "tcp", echo)
	if resp.StatusCode != 200 {
		t.Fatal(resp.Status)
	}
	payload := strings.Repeat("x", 1<<20+7)
	if _, err := io.WriteString(c, payload); err != nil {
		t.Fatal(err)
	}
	if err := c.(*net.TCPConn).CloseWrite(); err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(br)
	if err != nil {
		t.Fatalf("after the half-close: %v (got %q)", err, got)
	}
	want := fmt.Sprintf("read %d\n", len(payload))
	if string(got) != want {
		t.Fatalf("got %q, want %q", got, want)
	}
	rec := w.record(t, 1)
	if rec.Up != int64(len(payload)) || rec.Down != int64(len(want)) || rec.Duration <= 0 {
		t.Fatalf("record %+v, want up %d down %d", rec, len(payload), len(want))
	}
}

// A tunnel streams: each line is answered before the next is sent.
func TestConnectStreams(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		c, err := l.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		r := bufio.NewReader(c)
		for {
			line, err := r.ReadString('\n')
			if err != nil {
				return
			}
			io.WriteString(c, "ack "+line)
		}
	}()
	w := start(t, allow("127.0.0.1"), nil, "")
	c, br, resp := connect(t, w.Addr(), "tcp", l.Addr().String())
	if resp.StatusCode != 200 {
		t.Fatal(resp.Status)
	}
	for i := range 5 {
		fmt.Fprintf(c, "line %d\n", i)
		got, err := br.ReadString('\n')
		if err != nil || got != fmt.Sprintf("ack line %d\n", i) {
			t.Fatalf("round %d: %q %v", i, got, err)
		}
	}
}

// SOCKS5: an allowed name is tunnelled; a denied one gets "not allowed by
// ruleset" and a record with the reason.
func TestSOCKS5(t *testing.T) {
	echo := echoCount(t)
	_, port, _ := net.SplitHostPort(echo)
	w := start(t, allow("registry.test", "127.0.0.1"), map[string]string{"registry.test": "127.0.0.1", "other.test": "127.0.0.1"}, "")
	dial := func(name string) (net.Conn, byte) {
		c, err := net.Dial("tcp", w.Addr())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		c.SetDeadline(time.Now().Add(5 * time.Second))
		var p [2]byte
		fmt.Sscanf(port, "%d", new(int))
		var pn int
		fmt.Sscanf(port, "%d", &pn)
		p[0], p[1] = byte(pn>>8), byte(pn)
		msg := append([]byte{5, 1, 0, 5, 1, 0, 3, byte(len(name))}, name...)
		c.Write(append(msg, p[:]...))
		var rep [12]byte
		if _, err := io.ReadFull(c, rep[:12]); err != nil {
			t.Fatal(err)
		}
		return c, rep[3]
	}
	c, code := dial("registry.test")
	if code != 0 {
		t.Fatalf("allowed: reply %d", code)
	}
	io.WriteString(c, "abcd")
	c.(*net.TCPConn).CloseWrite()
	if got, _ := io.ReadAll(c); string(got) != "read 4\n" {
		t.Fatalf("allowed: %q", got)
	}
	if _, code = dial("other.test"); code != socksNotAllowed {
		t.Fatalf("denied: reply %d", code)
	}
	w.record(t, 2) // records come as connections end, in either order
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, rec := range w.records {
		if rec.Allowed != (rec.Host == "registry.test") || (!rec.Allowed && rec.Host != "other.test") {
			t.Fatalf("records %+v", w.records)
		}
	}
}

// Close ends open tunnels and removes the private socket directory, which
// only the owner could enter.
func TestCloseEndsTunnelsAndCleansUp(t *testing.T) {
	echo := echoCount(t)
	w := start(t, allow("127.0.0.1"), nil, "")
	dir := w.dir
	fi, err := os.Stat(dir)
	if err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("socket directory %s: %v %v", dir, fi.Mode(), err)
	}
	c, _, resp := connect(t, w.Addr(), "tcp", echo)
	if resp.StatusCode != 200 {
		t.Fatal(resp.Status)
	}
	done := make(chan error, 1)
	go func() { done <- w.Close() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Close waited on an open tunnel")
	}
	if _, err := c.Read(make([]byte, 1)); err == nil {
		t.Fatal("the tunnel is still open")
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("socket directory left: %v", err)
	}
	if rec := w.record(t, 1); !rec.Allowed {
		t.Fatalf("record %+v", rec)
	}
}

// A Judge that blocks (a person deciding) is released when the proxy
// closes.
func TestJudgeContextEndsOnClose(t *testing.T) {
	released := make(chan struct{})
	p, err := Start(Options{Judge: func(ctx context.Context, host string, port int) Verdict {
		<-ctx.Done()
		close(released)
		return Verdict{Reason: "closed"}
	}})
	if err != nil {
		t.Fatal(err)
	}
	c, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "CONNECT a.test:443 HTTP/1.1\r\nHost: a.test:443\r\n\r\n")
	time.Sleep(20 * time.Millisecond)
	p.Close()
	select {
	case <-released:
	case <-time.After(5 * time.Second):
		t.Fatal("the Judge was not released")
	}
}
