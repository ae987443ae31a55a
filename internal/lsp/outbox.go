package lsp

import (
	"context"
	"log/slog"
	"sync"
)

// outbox sends notifications to the client in the order they were queued,
// from one goroutine, so that run events (emitted on the agent's goroutine,
// which must not block) never wait on the client. The goroutine ends when
// the server's context ends.
type outbox struct {
	mu    sync.Mutex
	queue []func(context.Context)
	wake  chan struct{}
}

func (s *Server) startOutbox() {
	s.mu.Lock()
	if s.out != nil {
		s.mu.Unlock()
		return
	}
	o := &outbox{wake: make(chan struct{}, 1)}
	s.out = o
	ctx := s.ctx
	s.mu.Unlock()
	go o.run(ctx, s.log)
}

// post queues f; it runs after everything queued before it.
func (s *Server) post(f func(ctx context.Context)) {
	s.mu.Lock()
	o := s.out
	s.mu.Unlock()
	if o == nil {
		s.startOutbox()
		s.mu.Lock()
		o = s.out
		s.mu.Unlock()
	}
	o.mu.Lock()
	o.queue = append(o.queue, f)
	o.mu.Unlock()
	select {
	case o.wake <- struct{}{}:
	default:
	}
}

func (o *outbox) run(ctx context.Context, log *slog.Logger) {
	for {
		o.mu.Lock()
		batch := o.queue
		o.queue = nil
		o.mu.Unlock()
		for _, f := range batch {
			func() {
				defer func() {
					if p := recover(); p != nil {
						log.Error("outbox panic", "panic", p)
					}
				}()
				f(ctx)
			}()
		}
		if len(batch) > 0 {
			continue
		}
		select {
		case <-ctx.Done():
			return
		case <-o.wake:
		}
	}
}
