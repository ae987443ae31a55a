package lsp_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"testing"

	"go.lsp.dev/jsonrpc2"

	"github.com/ioh-lsp/ioh-lsp/internal/lsp"
)

// fuzzConn reads the fuzz input and records what the stream writes.
type fuzzConn struct {
	r   io.Reader
	out bytes.Buffer
}

func (c *fuzzConn) Read(p []byte) (int, error)  { return c.r.Read(p) }
func (c *fuzzConn) Write(p []byte) (int, error) { return c.out.Write(p) }
func (c *fuzzConn) Close() error                { return nil }

// FuzzStream feeds arbitrary bytes to the server's framing reader: it must
// never panic, must end at the end of the input (every Read consumes
// input), must hand on only messages that encode back to JSON-RPC, and
// everything it writes in answer must be well-framed error responses.
func FuzzStream(f *testing.F) {
	for _, seed := range []string{
		"Content-Length: 2\r\n\r\n{}",
		"Content-Length: 40\r\n\r\n{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"x\"}   ",
		"Content-Length: 5\r\n\r\n{\"a\":Content-Length: 2\r\n\r\n[]",
		"garbage\r\n\r\nContent-Length: 2\r\n\r\n{}",
		"Content-Length: -1\r\n\r\n",
		"Content-Length: 99999999999999999999\r\n\r\n",
		"\r\n\r\nContent-Type: x\r\n\r\n",
		"content-length:3\n\n{}}Content-Length: 1\r\n\r\n{",
		"Content-Length: 36\r\n\r\n{\"jsonrpc\":\"2.0\",\"id\":\"s\",\"result\":1}",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		conn := &fuzzConn{r: bytes.NewReader(data)}
		s := lsp.NewStream(conn, nil)
		ctx := context.Background()
		for i := 0; ; i++ {
			if i > len(data)+1 {
				t.Fatalf("%d reads from %d bytes: the reader does not consume its input", i, len(data))
			}
			msg, _, err := s.Read(ctx)
			if err != nil {
				if !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
					t.Fatalf("Read ended with %v, want EOF or unexpected EOF", err)
				}
				break
			}
			if _, err := jsonrpc2.EncodeMessage(msg); err != nil {
				t.Fatalf("a message handed on does not encode: %v", err)
			}
		}
		replies := jsonrpc2.NewHeaderStream(&fuzzConn{r: &conn.out})
		for {
			msg, _, err := replies.Read(ctx)
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatalf("the stream wrote a malformed reply: %v", err)
			}
			r, ok := msg.(*jsonrpc2.Response)
			if !ok || r.Err() == nil {
				t.Fatalf("the stream wrote %T, want an error response", msg)
			}
		}
	})
}
