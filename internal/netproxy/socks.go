package netproxy

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"time"
)

// SOCKS5 (RFC 1928), CONNECT only, no authentication.
const (
	socksVersion    = 5
	socksNoAuth     = 0
	socksNoMethod   = 0xff
	socksCmdConnect = 1
	socksAtypIPv4   = 1
	socksAtypName   = 3
	socksAtypIPv6   = 4

	socksOK           = 0
	socksNotAllowed   = 2
	socksUnreachable  = 4
	socksCmdNotSupp   = 7
	socksAtypNotSupp  = 8
	socksGeneralError = 1
)

// socks serves one SOCKS5 client. SOCKS has no room for a message, so a
// refusal's reason reaches the record only; the client sees "connection
// not allowed by ruleset".
func (p *Proxy) socks(c net.Conn, br *bufio.Reader, start time.Time) {
	if !socksGreet(c, br) {
		return
	}
	host, port, code := socksRequest(br)
	if code != socksOK {
		socksReply(c, code)
		return
	}
	c.SetReadDeadline(time.Time{})
	p.through(start, host, port, func(_ Conn, _ Verdict, status int) { socksReply(c, socksCode(status)) }, func(up net.Conn) (int64, int64) {
		if socksReply(c, socksOK) != nil {
			return 0, 0
		}
		return splice(c, br, up)
	})
}

func socksCode(status int) byte {
	switch status {
	case http.StatusForbidden:
		return socksNotAllowed
	case http.StatusBadGateway:
		return socksUnreachable
	}
	return socksGeneralError
}

// socksGreet reads the method offer and accepts "no authentication".
func socksGreet(c net.Conn, br *bufio.Reader) bool {
	var head [2]byte
	if _, err := io.ReadFull(br, head[:]); err != nil {
		return false
	}
	methods := make([]byte, head[1])
	if _, err := io.ReadFull(br, methods); err != nil {
		return false
	}
	for _, m := range methods {
		if m == socksNoAuth {
			_, err := c.Write([]byte{socksVersion, socksNoAuth})
			return err == nil
		}
	}
	c.Write([]byte{socksVersion, socksNoMethod})
	return false
}

// socksRequest reads a CONNECT request's destination.
func socksRequest(br *bufio.Reader) (string, int, byte) {
	var head [4]byte
	if _, err := io.ReadFull(br, head[:]); err != nil || head[0] != socksVersion {
		return "", 0, socksGeneralError
	}
	if head[1] != socksCmdConnect {
		return "", 0, socksCmdNotSupp
	}
	var host string
	switch head[3] {
	case socksAtypIPv4, socksAtypIPv6:
		n := 4
		if head[3] == socksAtypIPv6 {
			n = 16
		}
		b := make([]byte, n)
		if _, err := io.ReadFull(br, b); err != nil {
			return "", 0, socksGeneralError
		}
		a, _ := netip.AddrFromSlice(b)
		host = a.String()
	case socksAtypName:
		l, err := br.ReadByte()
		if err != nil {
			return "", 0, socksGeneralError
		}
		b := make([]byte, l)
		if _, err := io.ReadFull(br, b); err != nil {
			return "", 0, socksGeneralError
		}
		host = string(b)
	default:
		return "", 0, socksAtypNotSupp
	}
	var pb [2]byte
	if _, err := io.ReadFull(br, pb[:]); err != nil {
		return "", 0, socksGeneralError
	}
	return host, int(binary.BigEndian.Uint16(pb[:])), socksOK
}

func socksReply(c net.Conn, code byte) error {
	_, err := c.Write([]byte{socksVersion, code, 0, socksAtypIPv4, 0, 0, 0, 0, 0, 0})
	if err != nil {
		return fmt.Errorf("socks reply: %w", err)
	}
	return nil
}
