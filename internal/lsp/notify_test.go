package lsp

import (
	"context"
	"encoding/json"
	"log/slog"
	"net"
	"strings"
	"testing"
	"time"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"
)

// TestNotifyWarningIsShown: a warning logged with NotifyKey (a sandbox
// downgrade) reaches the user as window/showMessage, not only as a log
// line; a plain warning stays a log line.
func TestNotifyWarningIsShown(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s := New(Options{Version: "test", Logger: slog.New(slog.DiscardHandler)})
	a, b := net.Pipe()
	defer b.Close()
	go func() { _ = s.Serve(ctx, a) }() // ends when the pipe closes
	if err := b.SetDeadline(time.Now().Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	stream := jsonrpc2.NewHeaderStream(b)
	params, _ := json.Marshal(map[string]any{"processId": nil, "rootUri": nil, "capabilities": map[string]any{}})
	if _, err := stream.Write(ctx, jsonrpc2.NewCall(jsonrpc2.NewNumberID(1), "initialize", params)); err != nil {
		t.Fatal(err)
	}
	var shown, logged []string
	// read handles messages until the answer to call id (0: until a
	// showMessage has arrived).
	read := func(id int64) {
		for {
			msg, _, err := stream.Read(ctx)
			if err != nil {
				t.Fatalf("read: %v (shown %q, logged %q)", err, shown, logged)
			}
			switch m := msg.(type) {
			case *jsonrpc2.Response:
				if n, _ := m.ID().Number(); id != 0 && n == id {
					return
				}
			case *jsonrpc2.Notification:
				switch m.Method() {
				case protocol.MethodWindowShowMessage:
					var p protocol.ShowMessageParams
					if err := json.Unmarshal(m.Params(), &p); err != nil {
						t.Fatal(err)
					}
					if p.Type != protocol.MessageTypeWarning {
						t.Errorf("shown as %v, want a warning", p.Type)
					}
					shown = append(shown, p.Message)
					if id == 0 {
						return
					}
				case protocol.MethodWindowLogMessage:
					var p protocol.LogMessageParams
					if err := json.Unmarshal(m.Params(), &p); err != nil {
						t.Fatal(err)
					}
					logged = append(logged, p.Message)
				}
			}
		}
	}
	read(1)
	send := func(m jsonrpc2.Message) {
		if _, err := stream.Write(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	send(jsonrpc2.NewNotification("initialized", jsonrpc2.RawMessage(`{}`)))
	// Answered after initialized was handled: the editor's log is live.
	send(jsonrpc2.NewCall(jsonrpc2.NewNumberID(2), "workspace/executeCommand", jsonrpc2.RawMessage(`{"command": "ioh.runs"}`)))
	read(2)
	s.log.Warn("plain warning")
	s.log.Warn("sandbox: model-produced code runs in the landlock tier", "why", "user namespaces unavailable", NotifyKey, true)
	read(0)
	if len(shown) != 1 || !strings.Contains(shown[0], "landlock tier why=user namespaces unavailable") || strings.Contains(shown[0], NotifyKey) {
		t.Errorf("shown %q: want only the notify warning, with its reason and without the notify attribute", shown)
	}
	plain := false
	for _, l := range logged {
		plain = plain || strings.Contains(l, "plain warning")
	}
	if !plain {
		t.Errorf("the plain warning was not logged to the editor: %q", logged)
	}
}
