package event

import (
	"fmt"
	"net"
	"strconv"
	"strings"
)

// TypeNetConn is stored for each connection a sandboxed command made
// through the run's egress proxy, allowed or refused, once it ended
// (docs/policy.md#the-network-proxy).
const TypeNetConn = "net_conn"

// NetConn: one connection through the run's network proxy.
type NetConn struct {
	Host    string `json:"host"`
	Port    int    `json:"port"`
	Allowed bool   `json:"allowed"`
	// Rule is the deciding rule's pattern ("" for the default or the
	// proxy's own refusal), Layer where it came from ("proxy" for the
	// proxy's own: an address no rule names, a name that does not
	// resolve).
	Rule   string `json:"rule,omitempty"`
	Layer  string `json:"layer"`
	Reason string `json:"reason,omitempty"`
	// BytesUp were sent by the command, BytesDown received by it.
	BytesUp    int64 `json:"bytes_up"`
	BytesDown  int64 `json:"bytes_down"`
	DurationMS int64 `json:"duration_ms"`
}

func (*NetConn) EventType() string { return TypeNetConn }

// NetSummary counts a run's connections through its proxy.
type NetSummary struct {
	Allowed, Refused int
	Up, Down         int64
	// RefusedHosts are the distinct host:port targets refused, in order.
	RefusedHosts []string
}

// Add counts one connection.
func (s *NetSummary) Add(c *NetConn) {
	if !c.Allowed {
		s.Refused++
		t := net.JoinHostPort(c.Host, strconv.Itoa(c.Port))
		for _, h := range s.RefusedHosts {
			if h == t {
				return
			}
		}
		s.RefusedHosts = append(s.RefusedHosts, t)
		return
	}
	s.Allowed++
	s.Up += c.BytesUp
	s.Down += c.BytesDown
}

// Text is the summary in one line ("" when there was no connection):
// "network: 3 connections allowed (12 KiB up, 4.1 MiB down), 1 refused: evil.example:443".
func (s NetSummary) Text() string {
	if s.Allowed+s.Refused == 0 {
		return ""
	}
	conns := "connections"
	if s.Allowed == 1 {
		conns = "connection"
	}
	t := fmt.Sprintf("network: %d %s allowed through the proxy (%s up, %s down)", s.Allowed, conns, byteSize(s.Up), byteSize(s.Down))
	if s.Refused > 0 {
		hosts := s.RefusedHosts
		more := ""
		if len(hosts) > 5 {
			hosts, more = hosts[:5], fmt.Sprintf(" and %d more", len(hosts)-5)
		}
		t += fmt.Sprintf(", %d refused: %s%s", s.Refused, strings.Join(hosts, ", "), more)
	}
	return t
}

// byteSize is n in B, KiB, MiB or GiB with one decimal.
func byteSize(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	f, i := float64(n)/unit, 0
	for f >= unit && i < 2 {
		f /= unit
		i++
	}
	return fmt.Sprintf("%.1f %s", f, []string{"KiB", "MiB", "GiB"}[i])
}

// Headline is a connection as `run` shows it: "network: HOST:PORT
// allowed (RULE, LAYER), 1.0 KiB up, 2.0 MiB down" or "network: HOST:PORT
// refused: REASON".
func (c *NetConn) Headline() string {
	t := net.JoinHostPort(c.Host, strconv.Itoa(c.Port))
	if !c.Allowed {
		why := c.Reason
		if why == "" {
			why = "by the " + c.Layer + " layer"
		}
		if c.Rule != "" {
			why = "rule " + c.Rule + " (" + c.Layer + "): " + why
		}
		return "network: " + t + " refused: " + why
	}
	by := c.Layer
	if c.Rule != "" {
		by = c.Rule + ", " + c.Layer
	}
	return fmt.Sprintf("network: %s allowed (%s), %s up, %s down", t, by, byteSize(c.BytesUp), byteSize(c.BytesDown))
}
