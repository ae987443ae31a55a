package sandbox

import (
	"errors"
	"fmt"
	"net/netip"
	"path/filepath"
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
	return refuseNetProxy("chosen", "does not confine a network to a proxy yet")
}

// refuseNetProxy is the error of a tier named tier that cannot confine the
// network to the proxy, with why.
func refuseNetProxy(tier, why string) error {
	return fmt.Errorf("%w: the %s tier %s; run it where the linux or landlock tier works (`ioh-lsp sandbox doctor`), or grant the whole network (--net, a check's network: true) knowingly", ErrNetProxyUnsupported, tier, why)
}
