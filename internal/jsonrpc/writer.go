package jsonrpc

import (
	"log/slog"
	"sync"
)

// writer is an unbounded FIFO of encoded messages written by one
// goroutine, one frame each. A write that fails (the peer is gone) drops
// the queue, refuses what comes after and closes the framer's reader, so
// that the connection ends.
type writer struct {
	fr   Framer
	log  *slog.Logger
	mu   sync.Mutex
	cond *sync.Cond
	q    [][]byte
	done bool
	err  error
	exit chan struct{}
}

func newWriter(fr Framer, log *slog.Logger) *writer {
	w := &writer{fr: fr, log: log, exit: make(chan struct{})}
	w.cond = sync.NewCond(&w.mu)
	go w.loop()
	return w
}

// push queues one body; ErrClosed once the writer stopped.
func (w *writer) push(b []byte) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.done {
		return ErrClosed
	}
	w.q = append(w.q, b)
	w.cond.Signal()
	return nil
}

func (w *writer) loop() {
	defer close(w.exit)
	for {
		w.mu.Lock()
		for len(w.q) == 0 && !w.done {
			w.cond.Wait()
		}
		if len(w.q) == 0 {
			w.mu.Unlock()
			return
		}
		batch := w.q
		w.q = nil
		w.mu.Unlock()
		if err := w.write(batch); err != nil {
			w.log.Warn("json-rpc output: write failed; the connection ends", "err", err)
			w.mu.Lock()
			w.done, w.q, w.err = true, nil, err
			w.mu.Unlock()
			_ = w.fr.Close()
			return
		}
	}
}

// write writes a batch of bodies and flushes them: one write call for
// a burst, in order.
func (w *writer) write(batch [][]byte) error {
	for _, b := range batch {
		if err := w.fr.Write(b); err != nil {
			return err
		}
	}
	return w.fr.Flush()
}

// failed reports whether a write failed.
func (w *writer) failed() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err != nil
}

// close writes what is queued, stops the writer and returns the write
// error that stopped it early, if any.
func (w *writer) close() error {
	w.mu.Lock()
	w.done = true
	w.cond.Signal()
	w.mu.Unlock()
	<-w.exit
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}
