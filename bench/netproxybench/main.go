// Command netproxybench measures the egress proxy (package netproxy) on
// loopback against a direct connection in the same run: the throughput of
// a large download through a CONNECT tunnel and through plain-HTTP
// forwarding (goal >= 0.8x direct), the latency a connection gains
// (median, goal <= 1 ms), and what starting and closing a proxy costs: the
// cost a run that asks for no network avoids (it starts none).
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/ioh-lsp/ioh-lsp/internal/netproxy"
)

func main() {
	size := flag.Int64("mb", 100, "download size in MB")
	rounds := flag.Int("rounds", 3, "downloads of each kind (the best counts)")
	conns := flag.Int("conns", 300, "connections for the latency figure")
	starts := flag.Int("starts", 50, "proxy starts for the start-cost figure")
	flag.Parse()
	if err := run(*size<<20, *rounds, *conns, *starts); err != nil {
		fmt.Fprintln(os.Stderr, "netproxybench:", err)
		os.Exit(1)
	}
}

var zeros = make([]byte, 1<<20)

func run(size int64, rounds, conns, starts int) error {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/small" {
			io.WriteString(w, "ok")
			return
		}
		w.Header().Set("Content-Length", fmt.Sprint(size))
		for left := size; left > 0; left -= int64(len(zeros)) {
			if _, err := w.Write(zeros[:min(left, int64(len(zeros)))]); err != nil {
				return
			}
		}
	})}
	go srv.Serve(l)
	defer srv.Close()
	target := l.Addr().String()
	p, err := netproxy.Start(netproxy.Options{Judge: func(context.Context, string, int) netproxy.Verdict {
		return netproxy.Verdict{Allow: true, Rule: "127.0.0.1", Layer: "bench"}
	}})
	if err != nil {
		return err
	}
	defer p.Close()

	fmt.Printf("download of %d MB on loopback, best of %d\n", size>>20, rounds)
	direct := best(rounds, func() (time.Duration, error) { return download(directClient(), "http://"+target+"/big", size) })
	tunnel := best(rounds, func() (time.Duration, error) { return tunnelDownload(p.Addr(), target, size) })
	forward := best(rounds, func() (time.Duration, error) { return download(proxyClient(p.Addr()), "http://"+target+"/big", size) })
	for _, r := range []struct {
		name string
		d    measured
	}{{"direct", direct}, {"proxy, CONNECT tunnel", tunnel}, {"proxy, plain-HTTP forwarding", forward}} {
		if r.d.err != nil {
			return fmt.Errorf("%s: %w", r.name, r.d.err)
		}
		fmt.Printf("  %-30s %8.0f MB/s  %5.2fx direct\n", r.name, float64(size>>20)/r.d.d.Seconds(), direct.d.Seconds()/r.d.d.Seconds())
	}
	fmt.Printf("  goal >= 0.80x direct: tunnel %v, forwarding %v\n\n", direct.d.Seconds()/tunnel.d.Seconds() >= 0.8, direct.d.Seconds()/forward.d.Seconds() >= 0.8)

	fmt.Printf("latency of one connection and a small request, median of %d\n", conns)
	dl, err := latencies(conns, func() error { return smallDirect(target) })
	if err != nil {
		return err
	}
	pl, err := latencies(conns, func() error { return smallTunnel(p.Addr(), target) })
	if err != nil {
		return err
	}
	added := pl - dl
	fmt.Printf("  %-30s %8.3f ms\n  %-30s %8.3f ms\n  %-30s %8.3f ms (goal <= 1 ms: %v)\n\n", "direct", ms(dl), "through the proxy (CONNECT)", ms(pl), "added by the proxy", ms(added), added <= time.Millisecond)

	fmt.Printf("a run's proxy, median of %d\n", starts)
	sl, err := latencies(starts, func() error {
		q, err := netproxy.Start(netproxy.Options{Judge: func(context.Context, string, int) netproxy.Verdict { return netproxy.Verdict{} }})
		if err != nil {
			return err
		}
		return q.Close()
	})
	if err != nil {
		return err
	}
	fmt.Printf("  %-30s %8.3f ms\n  %-30s %8s    (nothing starts until a command needs the network)\n", "start + close, when asked", ms(sl), "when no network is asked", "0")
	return nil
}

type measured struct {
	d   time.Duration
	err error
}

func best(n int, f func() (time.Duration, error)) measured {
	m := measured{d: time.Duration(1<<63 - 1)}
	for range n {
		d, err := f()
		if err != nil {
			return measured{err: err}
		}
		m.d = min(m.d, d)
	}
	return m
}

func latencies(n int, f func() error) (time.Duration, error) {
	ds := make([]time.Duration, 0, n)
	for range n {
		t := time.Now()
		if err := f(); err != nil {
			return 0, err
		}
		ds = append(ds, time.Since(t))
	}
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	return ds[len(ds)/2], nil
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func directClient() *http.Client {
	return &http.Client{Transport: &http.Transport{Proxy: nil, DisableKeepAlives: true}}
}

func proxyClient(addr string) *http.Client {
	return &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(&url.URL{Scheme: "http", Host: addr}), DisableKeepAlives: true}}
}

func download(c *http.Client, u string, size int64) (time.Duration, error) {
	t := time.Now()
	resp, err := c.Get(u)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	return readAll(t, resp, size)
}

func readAll(t time.Time, resp *http.Response, size int64) (time.Duration, error) {
	n, err := io.Copy(io.Discard, resp.Body)
	if err != nil {
		return 0, err
	}
	if n != size {
		return 0, fmt.Errorf("got %d bytes, want %d", n, size)
	}
	return time.Since(t), nil
}

// tunnel opens a CONNECT tunnel to target and sends a GET of path.
func tunnel(proxy, target, path string) (net.Conn, *http.Response, error) {
	c, err := net.Dial("tcp", proxy)
	if err != nil {
		return nil, nil, err
	}
	fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", target, target)
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, &http.Request{Method: http.MethodConnect})
	if err != nil || resp.StatusCode != 200 {
		c.Close()
		return nil, nil, fmt.Errorf("CONNECT: %v %v", resp, err)
	}
	fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n", path, target)
	resp, err = http.ReadResponse(br, nil)
	if err != nil {
		c.Close()
		return nil, nil, err
	}
	return c, resp, nil
}

func tunnelDownload(proxy, target string, size int64) (time.Duration, error) {
	t := time.Now()
	c, resp, err := tunnel(proxy, target, "/big")
	if err != nil {
		return 0, err
	}
	defer c.Close()
	return readAll(t, resp, size)
}

func smallDirect(target string) error {
	c, err := net.Dial("tcp", target)
	if err != nil {
		return err
	}
	defer c.Close()
	fmt.Fprintf(c, "GET /small HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n", target)
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		return err
	}
	return expectOK(resp)
}

func smallTunnel(proxy, target string) error {
	c, resp, err := tunnel(proxy, target, "/small")
	if err != nil {
		return err
	}
	defer c.Close()
	return expectOK(resp)
}

func expectOK(resp *http.Response) error {
	b, err := io.ReadAll(resp.Body)
	if err != nil || !strings.HasPrefix(string(b), "ok") {
		return fmt.Errorf("small request: %q %v", b, err)
	}
	return nil
}
