package sandbox

import (
	"fmt"
	"io"
	"sync"
)

// runawayOutput is the output a command may write before it is stopped as
// a runaway (CapOutput), whatever Limits.Output keeps: a test suite that
// talks a lot is not a runaway, a command filling gigabytes is. A limit
// above it raises it (a stream that is the whole conversation).
var runawayOutput int64 = 1 << 30

// DroppedMarker is the format of the line that stands where kept output
// leaves bytes out: the number of bytes dropped.
const DroppedMarker = "\n[… %d bytes of output left out here: the first and the last part are kept; the command ran on …]\n"

// capWriter is stdout's or stderr's side of an outputKeeper.
type capWriter struct {
	k   *outputKeeper
	w   io.Writer
	err bool // stderr's side
}

// outputKeeper keeps a command's combined output within limit bytes: the
// head (the first half) goes to the writers as it comes, the tail (the
// last half) is held back and written when the run is done, after a
// marker saying how many bytes were left out between them. The command is
// never stopped for talking; only past the runaway cap does onRunaway
// fire (once). Every byte up to that cap also goes to stream, when set.
// Writes never fail, so the copying goroutines drain the pipes until the
// command is gone.
type outputKeeper struct {
	mu        sync.Mutex
	head      int64 // bytes still to pass straight through
	tailMax   int64
	tail      []chunk // the latest bytes past the head, at most tailMax
	tailLen   int64
	dropped   int64
	total     int64
	runaway   int64
	stream    io.Writer
	onRunaway func()
	stopped   bool // the runaway cap fired
	closed    bool // done was called: later writes are discarded
	stdout    io.Writer
	stderr    io.Writer
}

type chunk struct {
	b   []byte
	err bool
}

// newCapPair returns writers for stdout and stderr sharing one budget of
// limit kept bytes, and done, to call once the command's output has been
// read: it writes the held-back tail and reports whether bytes were left
// out (or the runaway cap stopped the run).
func newCapPair(limit int64, stdout, stderr, stream io.Writer, onRunaway func()) (o, e *capWriter, done func() bool) {
	if stdout == nil {
		stdout = io.Discard
	}
	if stderr == nil {
		stderr = io.Discard
	}
	k := &outputKeeper{head: limit - limit/2, tailMax: limit / 2, runaway: max(runawayOutput, limit),
		stream: stream, onRunaway: onRunaway, stdout: stdout, stderr: stderr}
	return &capWriter{k: k, w: stdout}, &capWriter{k: k, w: stderr, err: true}, k.done
}

func (c *capWriter) Write(p []byte) (int, error) {
	c.k.write(c.w, c.err, p)
	return len(p), nil
}

func (k *outputKeeper) write(w io.Writer, isErr bool, p []byte) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.stopped || k.closed {
		return
	}
	if left := k.runaway - k.total; int64(len(p)) > left {
		p = p[:left]
		k.stopped = true
	}
	k.total += int64(len(p))
	if k.stream != nil && len(p) > 0 {
		_, _ = k.stream.Write(p) // a failing consumer must not keep the child alive
	}
	if n := min(k.head, int64(len(p))); n > 0 {
		_, _ = w.Write(p[:n])
		k.head -= n
		p = p[n:]
	}
	if len(p) > 0 {
		k.keepTail(p, isErr)
	}
	if k.stopped && k.onRunaway != nil {
		k.onRunaway()
	}
}

// keepTail appends p to the held-back tail and drops its oldest bytes
// beyond tailMax.
func (k *outputKeeper) keepTail(p []byte, isErr bool) {
	if int64(len(p)) > k.tailMax {
		k.dropped += int64(len(p)) - k.tailMax
		p = p[int64(len(p))-k.tailMax:]
	}
	k.tail = append(k.tail, chunk{append([]byte(nil), p...), isErr})
	k.tailLen += int64(len(p))
	for k.tailLen > k.tailMax {
		over := k.tailLen - k.tailMax
		first := &k.tail[0]
		if int64(len(first.b)) <= over {
			k.tailLen -= int64(len(first.b))
			k.dropped += int64(len(first.b))
			k.tail = k.tail[1:]
			continue
		}
		first.b = first.b[over:]
		k.tailLen -= over
		k.dropped += over
	}
}

func (k *outputKeeper) done() bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.closed {
		return k.dropped > 0 || k.stopped
	}
	k.closed = true
	if k.dropped > 0 {
		_, _ = fmt.Fprintf(k.stdout, DroppedMarker, k.dropped)
	}
	for _, c := range k.tail {
		w := k.stdout
		if c.err {
			w = k.stderr
		}
		_, _ = w.Write(c.b)
	}
	k.tail = nil
	return k.dropped > 0 || k.stopped
}
