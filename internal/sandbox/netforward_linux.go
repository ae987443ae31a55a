package sandbox

import (
	"errors"
	"fmt"
	"io"
	"net"
	"runtime"
	"strconv"

	"golang.org/x/sys/unix"
)

// The linux tier's way to the proxy (Spec.NetProxy). The command keeps a
// network namespace of its own with only lo; PID 1, which lives in that
// namespace and outlives the command, listens on 127.0.0.1:PORT there and
// relays each connection to the proxy's unix socket on the host. It
// holds the socket by an O_PATH descriptor opened before the root is
// built (the host's tree is gone after) and connects through
// /proc/self/fd/N, so the socket is never in the command's view: from
// inside, the one way out is the forwarder's port, and every other
// address has no route (ENETUNREACH) or nothing listening (ECONNREFUSED).

// maxForwarded bounds the connections relayed at once: each holds two
// goroutines of PID 1, charged to the run's memory cap. More wait in the
// listener's backlog.
const maxForwarded = 256

// startForwarder opens the proxy's socket and listens on the forwarder's
// port; loErr is why lo did not come up, if it did not.
func startForwarder(cfg *initConfig, loErr error) (Mechanism, error) {
	if loErr != nil {
		return Mechanism{}, fmt.Errorf("net proxy forwarder: %w", loErr)
	}
	fd, err := unix.Open(cfg.NetProxySocket, unix.O_PATH|unix.O_CLOEXEC, 0)
	if err != nil {
		return Mechanism{}, fmt.Errorf("net proxy socket %s: %w (is the proxy running? Spec.NetProxy.Socket)", cfg.NetProxySocket, err)
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFSOCK {
		unix.Close(fd)
		return Mechanism{}, fmt.Errorf("net proxy socket %s: not a unix socket (Spec.NetProxy.Socket)", cfg.NetProxySocket)
	}
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(cfg.NetProxyPort))
	ln, err := net.Listen("tcp4", addr)
	if err != nil {
		unix.Close(fd)
		return Mechanism{}, fmt.Errorf("net proxy forwarder: %w", err)
	}
	go serveForwarded(ln, "/proc/self/fd/"+strconv.Itoa(fd)) // ends with PID 1
	return Mechanism{"net-proxy", StateApplied, fmt.Sprintf("only %s inside, which PID 1 relays to the proxy's unix socket %s; no other route out of the network namespace", addr, cfg.NetProxySocket)}, nil
}

// serveForwarded accepts on ln until it fails and relays each connection
// to the unix socket at target.
func serveForwarded(ln net.Listener, target string) {
	slots := make(chan struct{}, maxForwarded)
	for {
		c, err := ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			continue // a connection reset before accept, EMFILE: try the next
		}
		slots <- struct{}{}
		go func() {
			defer func() { <-slots }()
			relay(c, target)
		}()
	}
}

// relay copies between the command's connection c and a new connection
// to the proxy, each way until its end, passing each half-close on. A
// proxy that cannot be reached closes c: the client sees the connection
// end before any answer.
func relay(c net.Conn, target string) {
	defer c.Close()
	p, err := net.Dial("unix", target)
	if err != nil {
		return
	}
	defer p.Close()
	up := make(chan struct{})
	go func() {
		defer close(up)
		_, _ = io.Copy(p, c)
		_ = p.(*net.UnixConn).CloseWrite()
	}()
	_, _ = io.Copy(c, p)
	_ = c.(*net.TCPConn).CloseWrite()
	<-up
}

// linuxNetProxySupport is netProxySupport for the Linux tiers.
func linuxNetProxySupport(name string) (bool, string) {
	switch name {
	case BackendLinux:
		return true, "the command's own network namespace has only lo; PID 1 relays 127.0.0.1:PORT there to the proxy's unix socket, every other address has no route"
	case BackendLandlock:
		if abi := landlockABI(); abi < 4 {
			return false, fmt.Sprintf("a run restricted to allowed hosts is refused: Landlock ABI %d has no TCP rules (needs 4, Linux 6.7)", abi)
		}
		how := "Landlock lets TCP connect only to the proxy's port and refuses TCP bind; the socket filter refuses every socket but TCP over IPv4 (no UDP, so no DNS; no raw, IPv6 or unix sockets) and TCP Fast Open sends"
		if runtime.GOARCH == "amd64" {
			return true, how + "; the metadata supervisor does each IPv4 connect itself, only to 127.0.0.1:PORT"
		}
		return true, how + "; without a supervisor on " + runtime.GOARCH + " a connect to that port at another address is not refused (Landlock's rule names the port only)"
	}
	return false, "a run restricted to allowed hosts is refused: " + name + " is not a Linux tier"
}
