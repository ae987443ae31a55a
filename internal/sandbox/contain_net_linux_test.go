package sandbox

import (
	"net"
	"os"
	"path/filepath"
	"testing"

	"github.com/ioh-lsp/ioh-lsp/internal/sandbox/sandboxtest"
)

// echoServers starts TCP, UDP and unix-socket echo listeners and a tiny DNS
// server on the host loopback.
func echoServers(t *testing.T, sockDir string) (tcpAddr, udpAddr, dnsAddr, sock string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go acceptEcho(ln) // ends when the listener closes
	sock = filepath.Join(sockDir, "echo.sock")
	uln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	os.Chmod(sock, 0o777)
	t.Cleanup(func() { uln.Close() })
	go acceptEcho(uln)
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pc.Close() })
	go func() { // ends when the socket closes
		buf := make([]byte, 512)
		for {
			n, from, err := pc.ReadFrom(buf)
			if err != nil {
				return
			}
			pc.WriteTo(buf[:n], from)
		}
	}()
	dns, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { dns.Close() })
	go serveDNS(dns)
	return ln.Addr().String(), pc.LocalAddr().String(), dns.LocalAddr().String(), sock
}

func acceptEcho(ln net.Listener) {
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		go func() { // ends when the peer closes
			defer c.Close()
			buf := make([]byte, 4)
			for {
				n, err := c.Read(buf)
				if err != nil {
					return
				}
				c.Write(buf[:n])
			}
		}()
	}
}

func TestContainNetwork(t *testing.T) {
	requireLinuxBackend(t)
	h := helperPath(t)
	sockDir := "/run"
	if !sandboxtest.IsRoot() {
		sockDir = sandboxtest.Dir(t)
	} else {
		d, err := os.MkdirTemp("/run", "ioh-sandbox-sock-")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.RemoveAll(d) })
		os.Chmod(d, 0o755)
		sockDir = d
	}
	tcpAddr, udpAddr, dnsAddr, sock := echoServers(t, sockDir)
	cases := []struct {
		name, skip string
		argv       []string
	}{
		{name: "tcp loopback", argv: []string{h, helperArg, "tcp", tcpAddr}},
		{name: "udp loopback", argv: []string{h, helperArg, "udp", udpAddr}},
		{name: "dns", argv: []string{h, helperArg, "dns", dnsAddr, "example.com"}},
		{name: "host unix socket", argv: []string{h, helperArg, "unix", sock}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.name == "host unix socket" && !sandboxtest.IsRoot() {
				t.Skip("pathname sockets outside /run are reachable read-only until Landlock ABI 9; unprivileged tests cannot listen in /run")
			}
			out, output := run(t, Spec{Argv: c.argv})
			refused(t, out, output)
			control(t, "/", c.argv...)
		})
	}
	t.Run("network on request", func(t *testing.T) {
		out, output := run(t, Spec{Argv: []string{h, helperArg, "tcp", tcpAddr}, Network: true})
		if out.ExitCode != 0 {
			t.Errorf("with Network the loopback listener was unreachable: %s", output)
		}
	})
}
