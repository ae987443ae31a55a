package jsonrpc

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"sync"
)

// A Framer cuts a byte stream into message bodies and writes bodies as
// frames: HeaderFramer for LSP's Content-Length headers, LineFramer for
// ACP's one message a line. The Conn reads from one goroutine and writes
// from one goroutine.
type Framer interface {
	// Read returns the next body, valid until the next Read. A
	// *FrameError is a frame that was skipped (malformed or too large):
	// the Conn answers it and reads on. io.EOF is the clean end.
	Read() ([]byte, error)
	// Write writes one body as one frame, possibly buffered until Flush.
	Write(body []byte) error
	// Flush writes what Write buffered.
	Flush() error
	// Close closes the reading side (when it is an io.Closer), so that a
	// blocked Read returns.
	Close() error
}

// FrameError is a frame the framer skipped; the Conn answers it with Code
// and Message (with ID when the frame's first bytes held one) and logs
// it.
type FrameError struct {
	Code    int
	Message string
	ID      ID
}

func (e *FrameError) Error() string { return e.Message }

// idPeek is how much of an oversized frame is kept to find its id.
const idPeek = 4 << 10

// tooLarge is the FrameError of a body of n bytes over limit, answered
// with the id found in its first bytes.
func tooLarge(n, limit int64, peek []byte) *FrameError {
	what := fmt.Sprintf("message of %d bytes", n)
	if n < 0 {
		what = "message"
	}
	return &FrameError{
		Code:    InvalidRequest,
		Message: fmt.Sprintf("%s is larger than the limit of %d bytes; it was skipped", what, limit),
		ID:      peekID(peek),
	}
}

// closer closes r once, if it is an io.Closer.
type closer struct {
	r    io.Reader
	once sync.Once
	err  error
}

func (c *closer) Close() error {
	c.once.Do(func() {
		if cl, ok := c.r.(io.Closer); ok {
			c.err = cl.Close()
		}
	})
	return c.err
}

// peekID finds a top-level "id" (a number or a string) in a message or the
// start of one; no ID when there is none before the bytes end.
func peekID(b []byte) ID {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return ID{}
	}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return ID{}
		}
		if key, _ := t.(string); key != "id" {
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				return ID{}
			}
			continue
		}
		var raw json.RawMessage
		if dec.Decode(&raw) != nil {
			return ID{}
		}
		if id, ok := parseID(raw); ok && id != nullID {
			return id
		}
		return ID{}
	}
	return ID{}
}
