package sandboxexec

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ioh-lsp/ioh-lsp/internal/agent/contain"
	"github.com/ioh-lsp/ioh-lsp/internal/sandbox"
)

// netWorld is an adapter's egress judged by a fixed allow list of
// host:port targets, with what it recorded.
type netWorld struct {
	contain.Egress
	mu      sync.Mutex
	judged  []string
	records []contain.NetConn
}

func newNetWorld(t *testing.T, a *Adapter, allowed ...string) *netWorld {
	t.Helper()
	w := &netWorld{}
	w.Egress = a.Egress(contain.NetJudge{
		Judge: func(_ context.Context, host string, port int) contain.NetVerdict {
			target := net.JoinHostPort(host, fmt.Sprint(port))
			w.mu.Lock()
			w.judged = append(w.judged, target)
			w.mu.Unlock()
			for _, a := range allowed {
				if a == target {
					return contain.NetVerdict{Allow: true, Rule: a, Layer: "user"}
				}
			}
			return contain.NetVerdict{Layer: "default", Reason: "no rule allows it"}
		},
		Record: func(c contain.NetConn) {
			w.mu.Lock()
			w.records = append(w.records, c)
			w.mu.Unlock()
		},
	})
	t.Cleanup(func() { w.Close() })
	return w
}

func (w *netWorld) recorded(t *testing.T, n int) []contain.NetConn {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		w.mu.Lock()
		if len(w.records) >= n {
			r := append([]contain.NetConn(nil), w.records...)
			w.mu.Unlock()
			return r
		}
		w.mu.Unlock()
	}
	t.Fatalf("fewer than %d connections recorded", n)
	return nil
}

func helloServer(t *testing.T) (string, string) {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "hello from the test server\n")
	}))
	t.Cleanup(srv.Close)
	u, _ := url.Parse(srv.URL)
	return u.Host, u.Port()
}

// The egress starts nothing until a command needs it, then one proxy for
// the run: the same endpoints every time, judged by the run's judge, each
// connection recorded; Close removes it.
func TestEgressLazyJudgedAndRecorded(t *testing.T) {
	host, _ := helloServer(t)
	a, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	w := newNetWorld(t, a, host)
	if w.Egress.(*egress).proxy != nil {
		t.Fatal("the proxy started before any command asked for it")
	}
	p, err := w.Proxy(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if again, _ := w.Proxy(context.Background()); *again != *p {
		t.Fatalf("a second command got another proxy: %+v then %+v", p, again)
	}
	client := &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(&url.URL{Scheme: "http", Host: p.TCP})}}
	for _, target := range []string{"http://" + host + "/", "http://127.0.0.2:9/"} {
		resp, err := client.Get(target)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		allowed := strings.Contains(target, host)
		if allowed != (resp.StatusCode == 200) {
			t.Fatalf("%s: %d %s", target, resp.StatusCode, b)
		}
	}
	recs := w.recorded(t, 2) // in the order the connections ended
	if recs[0].Host == "127.0.0.2" {
		recs[0], recs[1] = recs[1], recs[0]
	}
	if !recs[0].Allowed || recs[0].Down == 0 || recs[1].Allowed || recs[1].Host != "127.0.0.2" {
		t.Fatalf("records %+v", recs)
	}
	w.Close()
	if _, err := os.Stat(p.Socket); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the socket outlived Close: %v", err)
	}
	if _, err := w.Proxy(context.Background()); err == nil {
		t.Fatal("a closed egress started again")
	}
}

// A request's NetProxy reaches the sandbox's Spec, in both Linux tiers:
// a tier that cannot confine the network to it refuses the run rather
// than grant the whole network, and one that can reaches only the proxy:
// an allowed name through it, a name no rule allows refused by it, and
// the allowed server directly (bypassing the proxy) not at all.
func TestExecPassesNetProxy(t *testing.T) {
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("no curl on this machine")
	}
	for _, backend := range []string{sandbox.BackendLinux, sandbox.BackendLandlock} {
		t.Run(backend, func(t *testing.T) { execThroughProxy(t, backend) })
	}
}

func execThroughProxy(t *testing.T, backend string) {
	addr, port := helloServer(t)
	a, err := New(Options{Backend: backend})
	if err != nil {
		t.Fatal(err)
	}
	a.resolve = func(_ context.Context, host string) ([]netip.Addr, error) {
		if host == "registry.test" {
			return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
		}
		return nil, fmt.Errorf("no such host %s", host)
	}
	w := newNetWorld(t, a, "registry.test:"+port, addr)
	p, err := w.Proxy(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	root := workspaceDir(t)
	res, err := a.Exec(context.Background(), &contain.Request{
		Shell: "curl -sS --max-time 5 http://registry.test:" + port + "/ ; curl -sS --max-time 5 http://other.test:" + port + "/ ; " +
			"curl -sS --max-time 5 --noproxy '*' http://" + addr + "/ || echo direct refused",
		Root: root, NetProxy: p,
	})
	if err != nil && res == nil && strings.Contains(err.Error(), "unavailable") {
		t.Skipf("the %s tier does not work here: %v", backend, err)
	}
	if errors.Is(err, sandbox.ErrNetProxyUnsupported) {
		if strings.Contains(err.Error(), "whole network") == false {
			t.Fatalf("the refusal does not say how to go on: %v", err)
		}
		t.Skipf("no tier here confines the network to the proxy yet: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	if res.Backend != backend {
		t.Fatalf("ran in the %s tier, want %s", res.Backend, backend)
	}
	out := string(res.Output)
	if !strings.Contains(out, "hello from the test server") || !strings.Contains(out, "other.test:"+port+" refused") || !strings.Contains(out, "direct refused") {
		t.Fatalf("through the proxy and direct (%s):\n%s", res.Backend, out)
	}
}
