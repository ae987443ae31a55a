package lsp

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"
)

// lockedBuffer is a bytes.Buffer safe for the server's goroutines.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestLogLevelsReachTheEditorAndStderr: a real server over a pipe sends
// each log record as window/logMessage with the MessageType of its level
// (debug only when the log level enables it), and every stderr line
// starts with its level (issue 13 item 6).
func TestLogLevelsReachTheEditorAndStderr(t *testing.T) {
	for _, tt := range []struct {
		level slog.Level
		want  map[string]protocol.MessageType
	}{
		{slog.LevelDebug, map[string]protocol.MessageType{"probe debug": protocol.MessageTypeLog, "probe info": protocol.MessageTypeInfo,
			"probe warn": protocol.MessageTypeWarning, "probe error": protocol.MessageTypeError}},
		{slog.LevelWarn, map[string]protocol.MessageType{"probe info": protocol.MessageTypeInfo,
			"probe warn": protocol.MessageTypeWarning, "probe error": protocol.MessageTypeError}},
	} {
		t.Run(tt.level.String(), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			var stderr lockedBuffer
			s := New(Options{Version: "test", Logger: slog.New(NewStderrHandler(&stderr, tt.level))})
			a, b := net.Pipe()
			defer b.Close()
			go func() { _ = s.Serve(ctx, a) }()
			if err := b.SetDeadline(time.Now().Add(time.Minute)); err != nil {
				t.Fatal(err)
			}
			stream := jsonrpc2.NewHeaderStream(b)
			send := func(m jsonrpc2.Message) {
				if _, err := stream.Write(ctx, m); err != nil {
					t.Fatal(err)
				}
			}
			params, _ := json.Marshal(map[string]any{"processId": nil, "rootUri": nil, "capabilities": map[string]any{}})
			send(jsonrpc2.NewCall(jsonrpc2.NewNumberID(1), "initialize", params))
			got := map[string]protocol.MessageType{}
			read := func(id int64, until func() bool) {
				for !until() {
					msg, _, err := stream.Read(ctx)
					if err != nil {
						t.Fatalf("read: %v (log messages so far: %v)", err, got)
					}
					if n, ok := msg.(*jsonrpc2.Notification); ok && n.Method() == protocol.MethodWindowLogMessage {
						var p protocol.LogMessageParams
						if err := json.Unmarshal(n.Params(), &p); err != nil {
							t.Fatal(err)
						}
						if strings.HasPrefix(p.Message, "probe ") {
							got[p.Message] = p.Type
						}
					}
					if r, ok := msg.(*jsonrpc2.Response); ok {
						if n, _ := r.ID().Number(); n == id {
							return
						}
					}
				}
			}
			read(1, func() bool { return false }) // until the initialize answer
			send(jsonrpc2.NewNotification("initialized", jsonrpc2.RawMessage(`{}`)))
			// A request answered after it: initialized has been handled
			// (notifications are handled in order), the editor's log is live.
			send(jsonrpc2.NewCall(jsonrpc2.NewNumberID(2), "workspace/executeCommand", jsonrpc2.RawMessage(`{"command": "ioh.runs"}`)))
			read(2, func() bool { return false })
			// The probes, then one more error that marks the end.
			s.log.Debug("probe debug")
			s.log.Info("probe info")
			s.log.Warn("probe warn")
			s.log.Error("probe error")
			read(0, func() bool { _, ok := got["probe error"]; return ok })
			for msg, typ := range tt.want {
				if got[msg] != typ {
					t.Errorf("%q sent as type %v, want %v", msg, got[msg], typ)
				}
			}
			if _, ok := got["probe debug"]; ok && tt.level > slog.LevelDebug {
				t.Errorf("debug sent to the editor at log level %s", tt.level)
			}
			// stderr: the level first on every line, as enabled.
			lines := map[string]string{}
			for _, l := range strings.Split(strings.TrimSpace(stderr.String()), "\n") {
				if i := strings.Index(l, "msg=\"probe "); i >= 0 {
					lines[strings.TrimSuffix(l[i+5:], "\"")] = l
				}
			}
			for lvl, name := range map[slog.Level]string{slog.LevelDebug: "debug", slog.LevelInfo: "info", slog.LevelWarn: "warn", slog.LevelError: "error"} {
				l, ok := lines["probe "+name]
				if ok != (lvl >= tt.level) {
					t.Errorf("stderr has probe %s = %v at level %s:\n%s", name, ok, tt.level, stderr.String())
					continue
				}
				prefix := "level=" + strings.ToUpper(name) + " time="
				if ok && (!strings.HasPrefix(l, prefix) || strings.Count(l, "level=") != 1) {
					t.Errorf("stderr line %q, want it to start %q with no other level= field", l, prefix)
				}
			}
		})
	}
}
