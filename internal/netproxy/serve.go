package netproxy

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// headerTimeout bounds how long a client may take to say where it goes.
const headerTimeout = 30 * time.Second

// handle serves one client connection: one destination per connection.
func (p *Proxy) handle(c net.Conn) {
	start := time.Now()
	c.SetReadDeadline(start.Add(headerTimeout))
	br := bufio.NewReader(c)
	first, err := br.Peek(1)
	if err != nil {
		return
	}
	if first[0] == socksVersion {
		p.socks(c, br, start)
		return
	}
	req, err := http.ReadRequest(br)
	if err != nil {
		writeStatus(c, http.StatusBadRequest, fmt.Sprintf("ioh-lsp network proxy: not an HTTP proxy request: %v\n", err))
		return
	}
	c.SetReadDeadline(time.Time{})
	if req.Method == http.MethodConnect {
		p.connect(c, br, req, start)
		return
	}
	p.forward(c, req, start)
}

// session is one judged connection on its way to being recorded.
type session struct {
	p     *Proxy
	start time.Time
	conn  Conn
}

func (p *Proxy) newSession(start time.Time, host string, port int) *session {
	return &session{p: p, start: start, conn: Conn{Host: host, Port: port}}
}

// judge decides the destination and notes the verdict in the record.
func (s *session) judge(ctx context.Context) decision {
	d := s.p.decide(ctx, s.conn.Host, s.conn.Port)
	s.conn.Host = d.host
	s.conn.Allowed = d.verdict.Allow
	s.conn.Rule, s.conn.Layer, s.conn.Reason = d.verdict.Rule, d.verdict.Layer, d.verdict.Reason
	return d
}

// open judges and dials; on refusal or failure it notes why and returns
// nil with the status to answer.
func (s *session) open() (net.Conn, decision, int) {
	d := s.judge(s.p.ctx)
	if !d.verdict.Allow {
		return nil, d, http.StatusForbidden
	}
	up, err := s.p.dial(s.p.ctx, d)
	if err != nil {
		s.conn.Reason = "allowed, but the connection failed: " + err.Error()
		return nil, d, http.StatusBadGateway
	}
	if !s.p.track(up, true) {
		up.Close()
		s.conn.Reason = "the proxy closed"
		return nil, d, http.StatusServiceUnavailable
	}
	return up, d, 0
}

func (s *session) closeUp(up net.Conn) {
	up.Close()
	s.p.track(up, false)
}

func (s *session) record() {
	s.conn.Duration = time.Since(s.start)
	if s.p.opts.Record != nil {
		s.p.opts.Record(s.conn)
	}
}

// connect serves CONNECT host:port: a tunnel once the destination is
// allowed.
func (p *Proxy) connect(c net.Conn, br *bufio.Reader, req *http.Request, start time.Time) {
	host, port, err := splitTarget(req.Host)
	if err != nil {
		writeStatus(c, http.StatusBadRequest, "ioh-lsp network proxy: CONNECT needs host:port: "+err.Error()+"\n")
		return
	}
	p.through(start, host, port, answerHTTP(c), func(up net.Conn) (int64, int64) {
		if _, err := io.WriteString(c, "HTTP/1.1 200 Connection established\r\n\r\n"); err != nil {
			return 0, 0
		}
		return splice(c, br, up)
	})
}

// through judges host:port and dials it; a refusal or failure is answered
// by refuse (with the status an HTTP client would get), else use moves
// the bytes and says how many went up and down. The connection is
// recorded either way.
func (p *Proxy) through(start time.Time, host string, port int, refuse func(Conn, Verdict, int), use func(up net.Conn) (int64, int64)) {
	s := p.newSession(start, host, port)
	defer s.record()
	up, d, status := s.open()
	if up == nil {
		refuse(s.conn, d.verdict, status)
		return
	}
	defer s.closeUp(up)
	s.conn.Up, s.conn.Down = use(up)
}

// answerHTTP answers an HTTP client's refused connection with the status
// and the refusal's text.
func answerHTTP(c net.Conn) func(Conn, Verdict, int) {
	return func(rec Conn, v Verdict, status int) { writeStatus(c, status, refusal(rec, v)) }
}

// forward serves one absolute-URI plain-HTTP request: the request goes
// upstream in origin form with Connection: close, the response comes
// back, and the client connection ends with it.
func (p *Proxy) forward(c net.Conn, req *http.Request, start time.Time) {
	if req.URL.Scheme != "http" || req.URL.Host == "" {
		writeStatus(c, http.StatusBadRequest, fmt.Sprintf("ioh-lsp network proxy: %s %s: want an absolute http:// URL (use CONNECT for https)\n", req.Method, req.RequestURI))
		return
	}
	host, port, err := urlTarget(req.URL)
	if err != nil {
		writeStatus(c, http.StatusBadRequest, "ioh-lsp network proxy: "+err.Error()+"\n")
		return
	}
	p.through(start, host, port, answerHTTP(c), func(up net.Conn) (int64, int64) { return exchange(c, req, up) })
}

// exchange sends req upstream and copies the response (and any 1xx
// before it) back, counting the bytes each way.
func exchange(c net.Conn, req *http.Request, up net.Conn) (upN, downN int64) {
	for _, h := range []string{"Proxy-Connection", "Proxy-Authorization", "Keep-Alive", "Connection"} {
		req.Header.Del(h)
	}
	req.Close = true
	req.RequestURI = ""
	// The judged host is the one named: a Host header naming another
	// (a second virtual host on the same address) is replaced.
	req.Host = req.URL.Host
	cu := &counter{Conn: up}
	sent := make(chan struct{})
	go func() {
		defer close(sent)
		if req.Write(cu) != nil {
			up.Close()
		}
	}()
	ur := bufio.NewReader(cu)
	for {
		resp, err := http.ReadResponse(ur, req)
		if err != nil {
			writeStatus(c, http.StatusBadGateway, "ioh-lsp network proxy: bad response from upstream: "+err.Error()+"\n")
			break
		}
		informational := resp.StatusCode >= 100 && resp.StatusCode < 200 && resp.StatusCode != http.StatusSwitchingProtocols
		if !informational {
			resp.Close = true
		}
		werr := resp.Write(c)
		resp.Body.Close()
		if werr != nil || !informational {
			break
		}
	}
	up.Close()
	c.SetReadDeadline(time.Now()) // a body the upstream did not wait for stops being read
	<-sent
	return cu.written.Load(), cu.read.Load()
}

// urlTarget is an http URL's host and port (80 when it names none).
func urlTarget(u *url.URL) (string, int, error) {
	host, ps := u.Hostname(), u.Port()
	if ps == "" {
		return host, 80, nil
	}
	port, err := strconv.Atoi(ps)
	if err != nil {
		return "", 0, fmt.Errorf("%s: port %q is not a number", u.Host, ps)
	}
	return host, port, nil
}

// refusal is the text a refused client reads: what was refused, why, by
// which rule and layer, and the configuration key that would allow it.
func refusal(c Conn, v Verdict) string {
	target := net.JoinHostPort(c.Host, strconv.Itoa(c.Port))
	var b strings.Builder
	fmt.Fprintf(&b, "ioh-lsp network proxy: connection to %s refused", target)
	if v.Allow {
		fmt.Fprintf(&b, ": %s\n", c.Reason)
		return b.String()
	}
	switch {
	case v.Rule != "":
		fmt.Fprintf(&b, " by the rule `deny net %s` of the %s layer", v.Rule, v.Layer)
	case v.Layer != "":
		fmt.Fprintf(&b, " (%s)", v.Layer)
	}
	if v.Reason != "" {
		fmt.Fprintf(&b, ": %s", v.Reason)
	}
	b.WriteString(".\n")
	if v.Rule != "" && v.Layer != LayerProxy {
		fmt.Fprintf(&b, "A deny rule wins over every allow: remove it from the %s layer's configuration to reach %s.\n", v.Layer, c.Host)
		return b.String()
	}
	fmt.Fprintf(&b, "To allow it, add %q (or %q) to %s.\n", c.Host, target, ConfigHint)
	return b.String()
}

// writeStatus answers a client with a status and a plain-text body, then
// the connection ends. The body is in the status line too: a client
// refused a CONNECT tunnel (every https:// URL) shows the status line and
// never the body.
func writeStatus(c net.Conn, status int, body string) {
	fmt.Fprintf(c, "HTTP/1.1 %d %s (%s)\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s",
		status, http.StatusText(status), reasonPhrase(body), len(body), body)
}

// reasonPhrase is s on one line as a status line may carry it: printable
// ASCII, at most 400 bytes.
func reasonPhrase(s string) string {
	b := []byte(strings.TrimSuffix(strings.TrimSpace(strings.ReplaceAll(s, "\n", " ")), "."))
	for i, ch := range b {
		if ch < ' ' || ch > '~' {
			b[i] = '?'
		}
	}
	if len(b) > 400 {
		b = append(b[:397], "..."...)
	}
	return string(b)
}
