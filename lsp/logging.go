package lsp

import (
	"context"
	"fmt"
	"log/slog"
	"strings"

	"go.lsp.dev/protocol"
)

// NotifyKey is the slog attribute (a bool) that makes a warning also a
// window/showMessage the user sees, not only a log line: a sandbox
// downgrade is one.
const NotifyKey = "notify"

// clientLog mirrors warnings and errors to the editor's log
// (window/logMessage) through the outbox, so logging never blocks on the
// client; everything still goes to the injected logger (stderr).
type clientLog struct {
	next slog.Handler
	s    *Server
}

func (h clientLog) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= slog.LevelWarn || h.next.Enabled(ctx, l)
}

func (h clientLog) Handle(ctx context.Context, r slog.Record) error {
	var err error
	if h.next.Enabled(ctx, r.Level) {
		err = h.next.Handle(ctx, r)
	}
	if r.Level >= slog.LevelWarn && h.s.live.Load() {
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
		typ := protocol.MessageTypeWarning
		if r.Level >= slog.LevelError {
			typ = protocol.MessageTypeError
		}
		msg := b.String()
		h.s.post(func(ctx context.Context) {
			_ = h.s.client.LogMessage(ctx, &protocol.LogMessageParams{Type: typ, Message: msg})
		})
		if show {
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
