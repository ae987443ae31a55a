package netproxy

import (
	"io"
	"net"
	"sync"
	"sync/atomic"
)

// splice copies both ways until each side has finished sending: an end of
// one direction is passed on as a half-close (CloseWrite), so a client that
// shuts its sending side still reads the whole answer. It returns the bytes
// sent up (client to destination) and down.
func splice(client net.Conn, clientR io.Reader, up net.Conn) (upN, downN int64) {
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		var err error
		upN, err = io.Copy(up, clientR)
		finish(up, client, err)
	}()
	var err error
	downN, err = io.Copy(client, up)
	finish(client, up, err)
	wg.Wait()
	return upN, downN
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
