package netproxy

import (
	"bufio"
	"io"
	"net"
	"sync"
	"sync/atomic"
)

// splice copies both ways until each side has finished sending: an end of
// one direction is passed on as a half-close (CloseWrite), so a client that
// shuts its sending side still reads the whole answer. It returns the bytes
// sent up (client to destination) and down. What the client sent past its
// request, still in clientR's buffer, goes first.
func splice(client net.Conn, clientR *bufio.Reader, up net.Conn) (upN, downN int64) {
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		n, err := drain(up, clientR)
		if err == nil {
			upN, err = copyConn(up, client)
		}
		upN += n
		finish(up, client, err)
	}()
	var err error
	downN, err = copyConn(client, up)
	finish(client, up, err)
	wg.Wait()
	return upN, downN
}

// drain writes what r has buffered to w.
func drain(w io.Writer, r *bufio.Reader) (int64, error) {
	b, _ := r.Peek(r.Buffered())
	n, err := w.Write(b)
	r.Discard(n)
	return int64(n), err
}

// copyConn copies src to dst in the kernel where it can: a TCP
// destination splices from a TCP or unix source (io.Copy would take the
// source's WriteTo first, which splices only into a unix socket and
// otherwise copies through user space); a unix destination is spliced
// into by a TCP source's WriteTo.
func copyConn(dst, src net.Conn) (int64, error) {
	if tc, ok := dst.(*net.TCPConn); ok {
		return tc.ReadFrom(src)
	}
	return io.Copy(dst, src)
}

// finish ends one direction: after a clean end of input the writer's
// sending side is shut; after an error both connections close, so the
// other direction ends too.
func finish(dst, src net.Conn, err error) {
	if err == nil {
		if cw, ok := dst.(interface{ CloseWrite() error }); ok && cw.CloseWrite() == nil {
			return
		}
	}
	dst.Close()
	src.Close()
}

// counter counts the bytes read from and written to a connection.
type counter struct {
	net.Conn
	read, written atomic.Int64
}

func (c *counter) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	c.read.Add(int64(n))
	return n, err
}

func (c *counter) Write(b []byte) (int, error) {
	n, err := c.Conn.Write(b)
	c.written.Add(int64(n))
	return n, err
}
