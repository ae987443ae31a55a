package sandbox

import (
	"errors"
	"fmt"
	"net/netip"
	"path/filepath"
	"strings"
)

// ErrNetProxyUnsupported: the tier cannot confine the network to
// Spec.NetProxy, so it refuses the run rather than grant the whole network.
var ErrNetProxyUnsupported = errors.New("sandbox: this tier cannot confine the network to the proxy")

// validateNetProxy checks Spec.NetProxy: an absolute socket path, a
// loopback TCP address with a port, and Network off (Network means the
// whole network; the two together would be ambiguous).
func (s *Spec) validateNetProxy() error {
	p := s.NetProxy
	if p == nil {
		return nil
	}
	if s.Network {
		return fmt.Errorf("%w: Network (the whole network) and NetProxy (only the proxy) are both set; set one", ErrBadSpec)
	}
	if p.Socket == "" || !filepath.IsAbs(p.Socket) {
		return fmt.Errorf("%w: NetProxy.Socket %q is not an absolute path", ErrBadSpec, p.Socket)
	}
	ap, err := netip.ParseAddrPort(p.TCP)
	if err != nil || !ap.Addr().Is4() || !ap.Addr().IsLoopback() || ap.Port() == 0 {
		return fmt.Errorf("%w: NetProxy.TCP %q is not a 127.x.x.x:PORT address", ErrBadSpec, p.TCP)
	}
	c := *p
	c.Socket = filepath.Clean(p.Socket)
	s.NetProxy = &c
	s.Env = append(append([]string{}, s.Env...), proxyEnv(int(ap.Port()))...)
	return nil
}

// proxyEnv points the proxy variables, both spellings, at the proxy on
// 127.0.0.1:port, where both Linux tiers put it: the linux tier's
// forwarder in the sandbox's own network namespace, the landlock tier's
// proxy itself. They come after the caller's Env, so a value there does
// not win. NO_PROXY names only loopback: what the command serves itself.
// GOPROXY is left as it is: the go command reaches it through these.
func proxyEnv(port int) []string {
	url := fmt.Sprintf("http://127.0.0.1:%d", port)
	var env []string
	for _, k := range []string{"HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY"} {
		env = append(env, k+"="+url, strings.ToLower(k)+"="+url)
	}
	return append(env, "NO_PROXY=localhost,127.0.0.1,::1", "no_proxy=localhost,127.0.0.1,::1")
}

// netMode is what a run's sockets may reach.
type netMode int

const (
	netNone  netMode = iota // no network: loopback of the sandbox's own at most
	netProxy                // only the proxy's port on 127.0.0.1
	netAll                  // the whole network
)

// netModeOf is cfg's network.
func netModeOf(cfg *initConfig) netMode {
	switch {
	case cfg.Network:
		return netAll
	case cfg.NetProxyPort != 0:
		return netProxy
	}
	return netNone
}

// proxyPortOf is the port a run restricted to the proxy may connect to,
// 0 for a run with no network or the whole network.
func proxyPortOf(cfg *initConfig) int {
	if netModeOf(cfg) != netProxy {
		return 0
	}
	return cfg.NetProxyPort
}

// proxyPort is p's TCP port (validated), 0 for no proxy.
func proxyPort(p *NetProxy) int {
	if p == nil {
		return 0
	}
	ap, err := netip.ParseAddrPort(p.TCP)
	if err != nil {
		return 0
	}
	return int(ap.Port())
}

// refuseNetProxy is the error of a tier named tier that cannot confine the
// network to the proxy, with why.
func refuseNetProxy(tier, why string) error {
	return fmt.Errorf("%w: the %s tier %s; run it where the linux or landlock tier works (`ioh-lsp sandbox doctor`), or grant the whole network (--net, a check's network: true) knowingly", ErrNetProxyUnsupported, tier, why)
}

// processTierNet says why a tier built on runProcess cannot confine the
// network to a proxy; "" for the other tiers.
func processTierNet(backend string) string {
	switch backend {
	case BackendFloor:
		return "bounds resources only and leaves the whole network open"
	case BackendMacOS:
		return "has no rule for the proxy's port in its Seatbelt profile yet (network is all or nothing there)"
	case BackendWindows:
		return "cannot deny the network"
	}
	return ""
}

// netProxySupport says whether the backend name confines a run's network
// to the proxy here, and how (or why not).
func netProxySupport(name string) (bool, string) {
	if why := processTierNet(name); why != "" {
		return false, "a run restricted to allowed hosts is refused: the tier " + why
	}
	return linuxNetProxySupport(name) // netforward_linux.go, netproxy_other.go
}
