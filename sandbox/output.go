package sandbox

import (
	"io"
	"sync"
)

// capWriter passes at most limit bytes (shared by stdout and stderr) to w;
// the first write past the limit calls onCap once. Writes never fail, so
// the copying goroutines drain the pipes until the command is gone.
type capWriter struct {
	mu    *sync.Mutex
	left  *int64
	hit   *bool
	onCap func()
	w     io.Writer
}

// newCapPair returns writers for stdout and stderr sharing one budget.
func newCapPair(limit int64, stdout, stderr io.Writer, onCap func()) (o, e *capWriter, hit func() bool) {
	mu := &sync.Mutex{}
	left := limit
	var h bool
	mk := func(w io.Writer) *capWriter {
		if w == nil {
			w = io.Discard
		}
		return &capWriter{mu: mu, left: &left, hit: &h, onCap: onCap, w: w}
	}
	return mk(stdout), mk(stderr), func() bool { mu.Lock(); defer mu.Unlock(); return h }
}

func (c *capWriter) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := int64(len(p))
	if *c.hit {
		return len(p), nil
	}
	keep := p
	if n > *c.left {
		keep = p[:*c.left]
		*c.hit = true
	}
	*c.left -= int64(len(keep))
	if len(keep) > 0 {
		_, _ = c.w.Write(keep) // a failing consumer must not keep the child alive
	}
	if *c.hit && c.onCap != nil {
		c.onCap()
	}
	return len(p), nil
}
