package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"testing"
	"time"
)

// TestAcpCommand drives `ioh-lsp acp` in-process over pipes: initialize,
// a line that is not JSON (answered -32700, the connection goes on), a
// session in a temporary workspace, and exit 0 when stdin closes.
func TestAcpCommand(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	state, ws := t.TempDir(), t.TempDir()
	var stderr bytes.Buffer
	env := &cliEnv{stdin: inR, stdout: outW, stderr: &lockedWriter{w: &stderr}, getenv: func(k string) string {
		return map[string]string{"IOH_STATE_DIR": state, "HOME": state, "XDG_CONFIG_HOME": state}[k]
	}}
	code := make(chan int, 1)
	go func() { code <- dispatch(ctx, env, []string{"acp"}); outW.Close() }()
	lines := bufio.NewScanner(outR)
	lines.Buffer(nil, 1<<20)
	next := func(what string) map[string]any {
		t.Helper()
		got := make(chan map[string]any, 1)
		go func() {
			// The reply to what was sent; notifications (a new session's
			// available_commands_update) are skipped.
			for lines.Scan() {
				var m map[string]any
				if json.Unmarshal(lines.Bytes(), &m) != nil {
					continue
				}
				if _, reply := m["id"]; reply {
					got <- m
					return
				}
			}
			got <- nil
		}()
		select {
		case m := <-got:
			if m == nil {
				t.Fatalf("%s: no reply (stderr: %s)", what, stderr.String())
			}
			return m
		case <-ctx.Done():
			t.Fatalf("%s: no reply before the deadline", what)
		}
		return nil
	}
	send := func(s string) {
		if _, err := io.WriteString(inW, s+"\n"); err != nil {
			t.Fatal(err)
		}
	}

	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}`)
	r := next("initialize")["result"].(map[string]any)
	if r["protocolVersion"] != 1.0 || r["agentCapabilities"].(map[string]any)["loadSession"] != true {
		t.Errorf("initialize: %v", r)
	}
	send(`{"jsonrpc":"2.0","id":2,"method":`)
	if e := next("not JSON")["error"].(map[string]any); e["code"] != -32700.0 {
		t.Errorf("not JSON: %v", e)
	}
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 3, "method": "session/new", "params": map[string]any{"cwd": ws, "mcpServers": []any{}}})
	send(string(b))
	if m := next("session/new"); m["result"] == nil {
		t.Fatalf("session/new: %v (stderr: %s)", m, stderr.String())
	}
	send(`{"jsonrpc":"2.0","id":4,"method":"session/new","params":{"cwd":"relative/dir","mcpServers":[]}}`)
	if e := next("relative cwd")["error"].(map[string]any); e["code"] != -32602.0 {
		t.Errorf("relative cwd: %v", e)
	}
	// A notification the server writes after the last reply read (a
	// session's available_commands_update may follow a later reply) must
	// not block it on the unread pipe: read on until it ends.
	go io.Copy(io.Discard, outR)
	inW.Close()
	select {
	case c := <-code:
		if c != exitOK {
			t.Errorf("acp exited %d, want 0\n%s", c, stderr.String())
		}
	case <-ctx.Done():
		t.Fatal("acp did not end after stdin closed")
	}
}

func TestAcpUsage(t *testing.T) {
	var stderr bytes.Buffer
	env := &cliEnv{stdin: bytes.NewReader(nil), stdout: io.Discard, stderr: &stderr, getenv: func(string) string { return "" }}
	for _, args := range [][]string{{"acp", "--bogus"}, {"acp", "extra"}, {"acp", "--log-level", "loud"}} {
		stderr.Reset()
		if c := dispatch(context.Background(), env, args); c != exitUsage {
			t.Errorf("%v: exit %d, want %d", args, c, exitUsage)
		}
		if bytes.Count(stderr.Bytes(), []byte("\n")) != 1 {
			t.Errorf("%v: want a one-line error, got %q", args, stderr.String())
		}
	}
}
