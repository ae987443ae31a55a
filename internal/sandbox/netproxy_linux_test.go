package sandbox

import (
	"archive/zip"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ioh-lsp/ioh-lsp/internal/sandbox/sandboxtest"
)

// netCase is one paired case of a run that reaches only the proxy: the
// contained command reaches its target or not (reach), and the control,
// the same command uncontained with the same proxy environment, reaches
// it unless noControl says why it cannot.
type netCase struct {
	name      string
	argv      []string
	reach     bool
	noControl string
}

// netWorld is what the cases aim at: an allowed web server (plain and
// TLS) the proxy reaches by name, loopback echo services, a DNS server,
// a host unix socket, a listener on a non-loopback address, and the
// proxy.
type netWorld struct {
	marker                    string
	web, tlsWeb, echo, dns    string
	sock, raw, resolver       string
	rawAtProxyPort            string
	proxy                     *testProxy
	work                      string
	allowedURL, allowedTLSURL string
	deniedURL                 string
	directURL                 string
}

func newNetWorld(t *testing.T) *netWorld {
	t.Helper()
	w := &netWorld{marker: fmt.Sprintf("NETPROXY-MARKER-%d", os.Getpid())}
	w.web = markerServer(t, w.marker, false)
	w.tlsWeb = markerServer(t, w.marker, true)
	w.echo, _, w.dns, w.sock = echoServers(t, sandboxtest.Dir(t))
	if ip := hostIPv4(); ip != "" {
		ln, err := net.Listen("tcp4", net.JoinHostPort(ip, "0"))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ln.Close() })
		go acceptEcho(ln) // ends when the listener closes
		w.raw = ln.Addr().String()
	}
	// The host's resolver, if it answers outside: the case's control.
	if r := hostResolver(); r != "" && exec.Command(helperPath(t), helperArg, "dnsask", r).Run() == nil {
		w.resolver = r
	} else {
		t.Logf("the host's resolver %q does not answer a DNS query: its case is left out", r)
	}
	w.proxy = startTestProxy(t, hostsFor(map[string]string{"allowed.test": w.web, "allowed-tls.test": w.tlsWeb}))
	// A server elsewhere on the proxy's own port (Landlock's TCP rule
	// names the port only).
	if ip := hostIPv4(); ip != "" {
		ln, err := net.Listen("tcp4", net.JoinHostPort(ip, portOf(w.proxy.TCP)))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ln.Close() })
		go acceptEcho(ln) // ends when the listener closes
		w.rawAtProxyPort = ln.Addr().String()
	}
	w.work = sandboxtest.Dir(t)
	w.allowedURL = "http://allowed.test:" + portOf(w.web) + "/"
	w.allowedTLSURL = "https://allowed-tls.test:" + portOf(w.tlsWeb) + "/"
	w.deniedURL = "http://denied.test:" + portOf(w.web) + "/"
	w.directURL = "http://" + w.web + "/"
	return w
}

func (w *netWorld) cases(h string) []netCase {
	probe := func(a ...string) []string { return append([]string{h, helperArg}, a...) }
	cs := []netCase{
		{name: "an allowed host through the proxy", argv: probe("proxyget", w.allowedURL), reach: true},
		{name: "an allowed host over CONNECT", argv: probe("proxyget", w.allowedTLSURL), reach: true},
		{name: "a denied host through the proxy", argv: probe("proxyget", w.deniedURL),
			noControl: "the proxy denies it outside too: the allowed host is its control"},
		{name: "the allowed server directly", argv: probe("dial", w.web)},
		{name: "the allowed server by its IP, proxy environment ignored", argv: probe("proxyget", w.directURL)},
		{name: "a loopback service on another port", argv: probe("tcp", w.echo)},
		{name: "a DNS lookup over UDP", argv: probe("dns", w.dns, "example.com")},
		{name: "a host unix socket", argv: probe("unix", w.sock)},
	}
	if w.raw != "" {
		cs = append(cs, netCase{name: "a raw IP of the host", argv: probe("tcp", w.raw)})
	}
	if w.rawAtProxyPort != "" {
		cs = append(cs,
			netCase{name: "the proxy's port at another address", argv: probe("tcp", w.rawAtProxyPort)},
			netCase{name: "the proxy's port at another address by TCP Fast Open", argv: probe("fastopen", w.rawAtProxyPort)})
	}
	cs = append(cs, netCase{name: "a loopback service by TCP Fast Open", argv: probe("fastopen", w.echo)})
	if w.resolver != "" {
		cs = append(cs, netCase{name: "a DNS query to the host's resolver", argv: probe("dnsask", w.resolver)})
	}
	if curl, err := exec.LookPath("curl"); err == nil {
		cs = append(cs,
			netCase{name: "curl to an allowed host", argv: []string{curl, "-sS", "-m", "10", w.allowedURL}, reach: true},
			netCase{name: "curl to an allowed host over CONNECT", argv: []string{curl, "-sSk", "-m", "10", w.allowedTLSURL}, reach: true},
			netCase{name: "curl to the allowed server, proxy ignored", argv: []string{curl, "-sS", "-m", "10", "--noproxy", "*", w.directURL}},
		)
	}
	return cs
}

// TestTierNetProxy runs the paired cases in each Linux tier: only the
// allowed hosts, through the proxy, are reached; every way around it is
// refused; each control reaches its target uncontained.
func TestTierNetProxy(t *testing.T) {
	h := helperPath(t)
	w := newNetWorld(t)
	for _, tier := range tiersHere(t) {
		t.Run(tier, func(t *testing.T) {
			useReexec(t)
			for _, c := range w.cases(h) {
				t.Run(c.name, func(t *testing.T) { w.check(t, tier, c) })
			}
		})
		// A warm stage was started on the previous run's word (a landlock
		// runner without network loads its socket filter ahead).
		t.Run(tier+" on warm stages of the small init program", func(t *testing.T) {
			useSmallInit(t)
			keepWarm(t)
			cs := w.cases(h)
			for _, c := range append(cs[:1:1], append(cs[3:4], cs...)...) {
				t.Run(c.name, func(t *testing.T) { w.check(t, tier, c) })
			}
		})
	}
	if d := w.proxy.deniedHosts(); !slices.Contains(d, "denied.test:"+portOf(w.web)) {
		t.Errorf("the proxy did not record the denied host: %q", d)
	}
}

// check runs c contained in tier and uncontained.
func (w *netWorld) check(t *testing.T, tier string, c netCase) {
	out, text := runTier(t, Spec{Backend: tier, Argv: c.argv, Dir: w.work, Writable: []string{w.work}, View: testView(filepath.Dir(c.argv[0])), NetProxy: &w.proxy.NetProxy})
	reached := out.ExitCode == 0
	if reached != c.reach {
		t.Errorf("contained: exit %d, reached %v, want %v:\n%s", out.ExitCode, reached, c.reach, text)
	}
	if !c.reach {
		t.Logf("contained (%s): %s", tier, strings.TrimSpace(text))
	}
	if c.reach && !strings.Contains(text, w.marker) {
		t.Errorf("contained: the answer lacks the server's marker:\n%s", text)
	}
	if c.noControl != "" {
		return
	}
	ctl := exec.Command(c.argv[0], c.argv[1:]...)
	ctl.Env = append(os.Environ(), proxyEnvFor(w.proxy.NetProxy)...)
	if b, err := ctl.CombinedOutput(); err != nil {
		t.Errorf("control (uncontained) did not reach its target: %v\n%s", err, b)
	}
}

// TestNetProxyMechanisms checks what each tier reports for a run that
// reaches only the proxy, and that the environment points at it.
func TestNetProxyMechanisms(t *testing.T) {
	w := newNetWorld(t)
	port := portOf(w.proxy.TCP)
	want := map[string]string{
		BackendLinux:    "net-proxy",
		BackendLandlock: "landlock-net",
	}
	for _, tier := range tiersHere(t) {
		t.Run(tier, func(t *testing.T) {
			out, text := runTier(t, Spec{Backend: tier, Argv: []string{"env"}, Dir: w.work, NetProxy: &w.proxy.NetProxy})
			for _, k := range []string{"HTTP_PROXY", "https_proxy", "ALL_PROXY", "no_proxy"} {
				if !strings.Contains(text, k+"=") {
					t.Errorf("%s not set inside:\n%s", k, text)
				}
			}
			if !strings.Contains(text, "HTTPS_PROXY=http://127.0.0.1:"+port+"\n") {
				t.Errorf("HTTPS_PROXY does not name the proxy's port %s:\n%s", port, text)
			}
			found := false
			for _, m := range out.Mechanisms {
				if m.Name == want[tier] && m.State == StateApplied && strings.Contains(m.Detail, port) {
					found = true
				}
			}
			if !found {
				t.Errorf("no applied %s mechanism naming port %s: %+v", want[tier], port, out.Mechanisms)
			}
		})
	}
}

// TestNetProxyRefusedByFloor: the floor tier cannot confine the network
// to a proxy, so it refuses the run (never grants the whole network).
func TestNetProxyRefusedByFloor(t *testing.T) {
	p := &NetProxy{Socket: "/nonexistent/p.sock", TCP: "127.0.0.1:9"}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := testRunner().Run(ctx, &Spec{Backend: BackendFloor, Argv: []string{"true"}, NetProxy: p})
	if !errors.Is(err, ErrNetProxyUnsupported) || out != nil || !strings.Contains(err.Error(), "floor") {
		t.Fatalf("floor with a proxy: %v, %v; want ErrNetProxyUnsupported naming the floor tier", out, err)
	}
	out, err = testRunner().Run(ctx, &Spec{Backend: BackendFloor, Argv: []string{"true"}})
	if err != nil || out.ExitCode != 0 {
		t.Fatalf("control, floor without a proxy: %v, %v", out, err)
	}
}

// TestTierNetProxyGoModDownload downloads a module in each tier from a
// module proxy the test serves on loopback, reached by name through the
// proxy (GOPROXY untouched by the sandbox: the go command finds the
// proxy in HTTP_PROXY). The control: the same download with GOPROXY
// naming the module proxy's address directly works uncontained and is
// refused contained.
func TestTierNetProxyGoModDownload(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on PATH")
	}
	mods := moduleProxy(t, "example.test/leash", "v1.0.0")
	p := startTestProxy(t, hostsFor(map[string]string{"modproxy.test": mods}))
	byName := "http://modproxy.test:" + portOf(mods)
	for _, tier := range tiersHere(t) {
		t.Run(tier, func(t *testing.T) {
			work := sandboxtest.Dir(t)
			env := func(goproxy, cache string) []string {
				return []string{"GOPROXY=" + goproxy, "GOFLAGS=-mod=mod", "GOSUMDB=off", "GONOSUMDB=*", "GOTOOLCHAIN=local",
					"GOPATH=" + filepath.Join(work, "gopath"), "GOMODCACHE=" + filepath.Join(work, cache), "GOCACHE=" + filepath.Join(work, "gocache")}
			}
			argv := []string{goBin, "mod", "download", "-json", "example.test/leash@v1.0.0"}
			run := func(goproxy, cache string) (*Outcome, string) {
				return runTier(t, Spec{Backend: tier, Argv: argv, Dir: work, Writable: []string{work}, Env: env(goproxy, cache), NetProxy: &p.NetProxy})
			}
			out, text := run(byName, "modcache")
			if out.ExitCode != 0 || !strings.Contains(text, `"Version": "v1.0.0"`) {
				t.Fatalf("go mod download through the proxy: exit %d:\n%s", out.ExitCode, text)
			}
			if _, err := os.Stat(filepath.Join(work, "modcache", "example.test", "leash@v1.0.0", "leash.go")); err != nil {
				t.Errorf("the module is not in the module cache: %v", err)
			}
			direct := "http://" + mods
			out, text = run(direct, "modcache-direct")
			if out.ExitCode == 0 {
				t.Errorf("go mod download with GOPROXY=%s (around the proxy) worked contained:\n%s", direct, text)
			}
			t.Logf("contained, GOPROXY=%s: %s", direct, strings.TrimSpace(text))
			ctl := exec.Command(goBin, argv[1:]...)
			ctl.Dir = work
			ctl.Env = append(os.Environ(), env(direct, "modcache-control")...)
			if b, err := ctl.CombinedOutput(); err != nil {
				t.Errorf("control: go mod download with GOPROXY=%s uncontained: %v\n%s", direct, err, b)
			}
			// The module cache is read-only, as the go command makes it.
			exec.Command("chmod", "-R", "u+w", work).Run()
		})
	}
}

// moduleProxy serves module path at version as a GOPROXY does and
// returns its address.
func moduleProxy(t *testing.T, path, version string) string {
	t.Helper()
	var zbuf bytes.Buffer
	zw := zip.NewWriter(&zbuf)
	for name, body := range map[string]string{
		"go.mod":   "module " + path + "\n\ngo 1.21\n",
		"leash.go": "package leash\n\nconst On = true\n",
	} {
		f, err := zw.Create(path + "@" + version + "/" + name)
		if err != nil {
			t.Fatal(err)
		}
		io.WriteString(f, body)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{
		"/" + path + "/@v/list":                 []byte(version + "\n"),
		"/" + path + "/@v/" + version + ".info": []byte(`{"Version":"` + version + `","Time":"2024-01-01T00:00:00Z"}`),
		"/" + path + "/@v/" + version + ".mod":  []byte("module " + path + "\n\ngo 1.21\n"),
		"/" + path + "/@v/" + version + ".zip":  zbuf.Bytes(),
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, ok := files[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Write(b)
	}))
	t.Cleanup(srv.Close)
	return srv.Listener.Addr().String()
}
