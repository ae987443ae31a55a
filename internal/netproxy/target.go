package netproxy

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"
)

// decision is the judgement of one destination: the verdict and, when it
// allows, the addresses that were checked and may be dialled.
type decision struct {
	host    string // normalised: lower case, no trailing dot, unmapped address
	port    int
	verdict Verdict
	addrs   []netip.Addr
}

func refuse(reason string) Verdict {
	return Verdict{Layer: LayerProxy, Reason: reason}
}

// decide judges host:port. The host is normalised first (the form the
// Judge sees is the form that is dialled); an IP literal must be named
// exactly by an allowing rule; a name must be allowed and every address
// it resolves to must be public unless a rule names that address exactly.
func (p *Proxy) decide(ctx context.Context, host string, port int) decision {
	d := decision{host: host, port: port}
	if port < 1 || port > 65535 {
		d.verdict = refuse(fmt.Sprintf("port %d is not a TCP port", port))
		return d
	}
	host = strings.TrimSuffix(strings.TrimPrefix(strings.TrimSuffix(host, "]"), "["), ".")
	host = strings.ToLower(host)
	d.host = host
	if a, err := netip.ParseAddr(host); err == nil {
		return p.decideAddr(ctx, d, a.Unmap())
	}
	if err := checkName(host); err != nil {
		d.verdict = refuse(err.Error())
		return d
	}
	d.verdict = p.opts.Judge(ctx, host, port)
	if !d.verdict.Allow {
		return d
	}
	addrs, err := p.opts.Resolve(ctx, host)
	if err == nil && len(addrs) == 0 {
		err = errors.New("no addresses")
	}
	if err != nil {
		d.verdict = refuse(fmt.Sprintf("%s does not resolve: %v", host, err))
		return d
	}
	for i, a := range addrs {
		a = a.Unmap()
		addrs[i] = a
		if kind := special(a); kind != "" {
			if v := p.judgeAddr(ctx, a, port); !v.Allow {
				v.Reason = fmt.Sprintf("%s resolves to %s, a %s address, and no rule names that address exactly (%s)", host, a, kind, v.Reason)
				d.verdict = v
				return d
			}
		}
	}
	d.addrs = addrs
	return d
}

// decideAddr judges a destination given as an IP literal: only an allow
// rule that names the address itself, without a wildcard, opens it.
func (p *Proxy) decideAddr(ctx context.Context, d decision, a netip.Addr) decision {
	d.host = a.String()
	if a.Zone() != "" {
		d.verdict = refuse(fmt.Sprintf("%s: an address with a zone is never reached", d.host))
		return d
	}
	d.verdict = p.judgeAddr(ctx, a, d.port)
	if d.verdict.Allow {
		d.addrs = []netip.Addr{a}
	} else {
		kind := special(a)
		if kind == "" {
			kind = "raw IP"
		}
		d.verdict.Reason = fmt.Sprintf("%s is a %s address and no rule names it exactly (%s)", d.host, kind, d.verdict.Reason)
	}
	return d
}

// judgeAddr asks the Judge about an address and keeps an allow only when
// its rule names the address exactly: a wildcard rule (`*`, `*.com`,
// `10.*`) never opens an address.
func (p *Proxy) judgeAddr(ctx context.Context, a netip.Addr, port int) Verdict {
	v := p.opts.Judge(ctx, a.String(), port)
	if !v.Allow {
		if v.Reason == "" {
			v.Reason = "not allowed"
		}
		return v
	}
	if !namesAddr(v.Rule, a) {
		return refuse(fmt.Sprintf("the %s layer's rule `allow net %s` is not the address itself", v.Layer, v.Rule))
	}
	return v
}

// namesAddr reports whether a host[:port] pattern's host is exactly a.
func namesAddr(pattern string, a netip.Addr) bool {
	h := pattern
	switch {
	case strings.HasPrefix(h, "["):
		if end := strings.IndexByte(h, ']'); end > 0 {
			h = h[1:end]
		}
	case strings.Count(h, ":") == 1:
		h = h[:strings.IndexByte(h, ':')]
	}
	b, err := netip.ParseAddr(h)
	return err == nil && b.Unmap() == a
}

// special names the range of an address that is never reached without a
// rule naming it ("loopback", "private", ...), "" for a public unicast
// address.
func special(a netip.Addr) string {
	switch {
	case a.IsLoopback():
		return "loopback"
	case a.IsLinkLocalUnicast(), a.IsLinkLocalMulticast():
		return "link-local"
	case a.IsPrivate():
		return "private"
	case a.IsUnspecified():
		return "unspecified"
	case a.IsMulticast(), a.IsInterfaceLocalMulticast():
		return "multicast"
	case !a.IsGlobalUnicast():
		return "non-unicast"
	}
	for _, r := range reserved {
		if r.prefix.Contains(a) {
			return r.kind
		}
	}
	return ""
}

var reserved = []struct {
	prefix netip.Prefix
	kind   string
}{
	{netip.MustParsePrefix("0.0.0.0/8"), "reserved"},
	{netip.MustParsePrefix("100.64.0.0/10"), "shared (carrier-grade NAT)"},
	{netip.MustParsePrefix("192.0.0.0/24"), "reserved"},
	{netip.MustParsePrefix("198.18.0.0/15"), "benchmarking"},
	{netip.MustParsePrefix("240.0.0.0/4"), "reserved"},
	// IPv6 forms that carry an IPv4 address to a translator.
	{netip.MustParsePrefix("64:ff9b::/96"), "NAT64"},
	{netip.MustParsePrefix("64:ff9b:1::/48"), "NAT64"},
	{netip.MustParsePrefix("2002::/16"), "6to4"},
	{netip.MustParsePrefix("2001::/32"), "Teredo"},
}

// checkName refuses what is not a DNS host name: characters outside
// letters, digits, '-', '_' and '.', empty labels, and a last label that
// does not start with a letter (so "127.1" or "0x7f000001", which a
// system resolver reads as addresses, are never judged as names).
func checkName(h string) error {
	if h == "" {
		return errors.New("no host named")
	}
	if len(h) > 253 {
		return fmt.Errorf("host name of %d bytes is longer than DNS allows", len(h))
	}
	labels := strings.Split(h, ".")
	for _, l := range labels {
		if l == "" {
			return fmt.Errorf("%q is not a host name (empty label)", h)
		}
		for _, r := range l {
			if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
				return fmt.Errorf("%q is not a host name (character %q)", h, r)
			}
		}
	}
	if last := labels[len(labels)-1]; last[0] < 'a' || last[0] > 'z' {
		return fmt.Errorf("%q is not a host name: it reads as a number, write the address in its usual form", h)
	}
	return nil
}

// dial connects to the first checked address that answers.
func (p *Proxy) dial(ctx context.Context, d decision) (net.Conn, error) {
	var errs []error
	for _, a := range d.addrs {
		c, err := p.opts.Dial(ctx, "tcp", net.JoinHostPort(a.String(), strconv.Itoa(d.port)))
		if err == nil {
			return c, nil
		}
		errs = append(errs, err)
	}
	return nil, errors.Join(errs...)
}

// splitTarget splits "host:port" into its parts; the port is required.
func splitTarget(s string) (string, int, error) {
	h, ps, err := net.SplitHostPort(s)
	if err != nil {
		return "", 0, fmt.Errorf("%q is not host:port", s)
	}
	port, err := strconv.Atoi(ps)
	if err != nil {
		return "", 0, fmt.Errorf("%q: port %q is not a number", s, ps)
	}
	return h, port, nil
}
