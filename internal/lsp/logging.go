package lsp

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"

	"go.lsp.dev/protocol"
)

// NotifyKey is the slog attribute (a bool) that makes a warning also a
// window/showMessage the user sees, not only a log line: a sandbox
// downgrade is one.
const NotifyKey = "notify"

// clientLog mirrors the server's log to the editor's (window/logMessage)
// through the outbox, so logging never blocks on the client: each record
// with the MessageType of its level (Error, Warning, Info; Debug as Log),
// errors, warnings and information always, debug records when the
// injected logger (stderr) has debug enabled. Everything the injected
// logger enables still goes to it. Mirroring queues on the outbox, which
// takes s.mu: never log while holding s.mu once the server is live.
type clientLog struct {
	next slog.Handler
	s    *Server
}

// messageType is the window/logMessage type of a slog level.
func messageType(l slog.Level) protocol.MessageType {
	switch {
	case l >= slog.LevelError:
		return protocol.MessageTypeError
	case l >= slog.LevelWarn:
		return protocol.MessageTypeWarning
	case l >= slog.LevelInfo:
		return protocol.MessageTypeInfo
	}
	return protocol.MessageTypeLog
}

func (h clientLog) toClient(ctx context.Context, l slog.Level) bool {
	return l >= slog.LevelInfo || h.next.Enabled(ctx, l)
}

func (h clientLog) Enabled(ctx context.Context, l slog.Level) bool {
	return h.toClient(ctx, l) || h.next.Enabled(ctx, l)
}

func (h clientLog) Handle(ctx context.Context, r slog.Record) error {
	var err error
	if h.next.Enabled(ctx, r.Level) {
		err = h.next.Handle(ctx, r)
	}
	if h.toClient(ctx, r.Level) && h.s.live.Load() {
		var b strings.Builder
		b.WriteString(r.Message)
		show := false
		r.Attrs(func(a slog.Attr) bool {
			if a.Key == NotifyKey {
				show = a.Value.Kind() == slog.KindBool && a.Value.Bool()
				return true
			}
			fmt.Fprintf(&b, " %s=%v", a.Key, a.Value)
			return true
		})
		typ := messageType(r.Level)
		msg := b.String()
		h.s.post(func(ctx context.Context) {
			_ = h.s.client.LogMessage(ctx, &protocol.LogMessageParams{Type: typ, Message: msg})
		})
		if show && r.Level >= slog.LevelWarn {
			h.s.showMessage(typ, msg)
		}
	}
	return err
}

func (h clientLog) WithAttrs(attrs []slog.Attr) slog.Handler {
	return clientLog{h.next.WithAttrs(attrs), h.s}
}

func (h clientLog) WithGroup(name string) slog.Handler {
	return clientLog{h.next.WithGroup(name), h.s}
}

// NewStderrHandler is the server's stderr log: slog's text format with
// the level moved to the front of each line ("level=WARN time=… msg=…"),
// so an editor that shows the server's stderr at one level (VS Code's
// output channel marks it all as errors) still shows, first thing, what
// each line is; a client that reads slog's level= field (the VS Code
// extension does) keeps reading it. The editor gets the same records as
// window/logMessage with their types (clientLog).
func NewStderrHandler(w io.Writer, level slog.Leveler) slog.Handler {
	out := &prefixOut{w: w}
	inner := slog.NewTextHandler(&out.buf, &slog.HandlerOptions{Level: level, ReplaceAttr: func(groups []string, a slog.Attr) slog.Attr {
		if len(groups) == 0 && a.Key == slog.LevelKey {
			return slog.Attr{} // in the prefix
		}
		return a
	}})
	return prefixHandler{inner, out}
}

// prefixOut is the writer behind a prefixHandler and its derivatives: one
// record is formatted into buf, then written with its prefix in one write.
type prefixOut struct {
	mu  sync.Mutex
	w   io.Writer
	buf bytes.Buffer
}

type prefixHandler struct {
	inner slog.Handler
	out   *prefixOut
}

func (h prefixHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return h.inner.Enabled(ctx, l)
}

func (h prefixHandler) Handle(ctx context.Context, r slog.Record) error {
	h.out.mu.Lock()
	defer h.out.mu.Unlock()
	h.out.buf.Reset()
	h.out.buf.WriteString(slog.LevelKey + "=" + r.Level.String() + " ")
	if err := h.inner.Handle(ctx, r); err != nil {
		return err
	}
	_, err := h.out.w.Write(h.out.buf.Bytes())
	return err
}

func (h prefixHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return prefixHandler{h.inner.WithAttrs(attrs), h.out}
}

func (h prefixHandler) WithGroup(name string) slog.Handler {
	return prefixHandler{h.inner.WithGroup(name), h.out}
}
