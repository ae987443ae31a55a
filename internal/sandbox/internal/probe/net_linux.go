package main

import (
	"context"
	"io"
	"net"
	"time"

	"golang.org/x/sys/unix"
)

// dial connects over network, sends "ping" and reads four bytes back (the
// tests' listeners echo), all within 3 s.
func dial(network string) func(a []string) error {
	return func(a []string) error {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		defer cancel()
		var d net.Dialer
		c, err := d.DialContext(ctx, network, a[0])
		if err != nil {
			return err
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(2 * time.Second))
		if _, err := c.Write([]byte("ping")); err != nil {
			return err
		}
		buf := make([]byte, 4)
		_, err = io.ReadFull(c, buf)
		return err
	}
}

// dns resolves a[1] with Go's own resolver, asking the server a[0] over
// UDP.
func dns(a []string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	r := &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "udp", a[0])
	}}
	_, err := r.LookupHost(ctx, a[1])
	return err
}

func socketpair([]string) error {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fds[0])
	defer unix.Close(fds[1])
	if _, err := unix.Write(fds[0], []byte{'x'}); err != nil {
		return err
	}
	b := make([]byte, 1)
	_, err = unix.Read(fds[1], b)
	return err
}
