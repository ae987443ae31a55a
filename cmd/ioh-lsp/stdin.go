package main

import (
	"io"
	"sync"
)

// closableReader makes a read blocked on r end when Close is called.
//
// A read on the process's stdin (a pipe or terminal in blocking mode, as
// editors and ACP clients hand it over) is not interrupted by closing the
// file: after LSP `exit`, SIGTERM or an ACP session's end, the server's
// read loop would wait for the client to close its end, and the process
// with it. Here one goroutine reads r into a pipe; Close closes the pipe,
// so the consumer's Read returns at once (io.ErrClosedPipe) and the
// process exits; the goroutine stays blocked on r until the process ends
// or r yields, and what it read after Close is dropped.
type closableReader struct {
	pr   *io.PipeReader
	once sync.Once
}

// newClosableReader starts the goroutine that feeds the pipe from r.
func newClosableReader(r io.Reader) *closableReader {
	pr, pw := io.Pipe()
	go func() {
		buf := make([]byte, 64<<10)
		for {
			n, err := r.Read(buf)
			if n > 0 {
				if _, werr := pw.Write(buf[:n]); werr != nil {
					return // closed: nobody reads any more
				}
			}
			if err != nil {
				pw.CloseWithError(err) // io.EOF reads as the end of input
				return
			}
		}
	}()
	return &closableReader{pr: pr}
}

func (c *closableReader) Read(p []byte) (int, error) { return c.pr.Read(p) }

// Close ends every Read, the one in progress included.
func (c *closableReader) Close() error {
	c.once.Do(func() { _ = c.pr.Close() })
	return nil
}
