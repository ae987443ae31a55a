package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"go.lsp.dev/jsonrpc2"
)

// editorPipe is the editor's side of `ioh-lsp serve`'s stdio.
type editorPipe struct {
	io.Reader
	io.WriteCloser
}

// TestServeSurvivesMalformedInput drives `ioh-lsp serve` as an editor
// would, but sends a body that is not JSON and a broken header between
// its requests: each gets an error reply and the command still ends with
// exit 0 after shutdown and exit (before, the first ended it with exit 1).
func TestServeSurvivesMalformedInput(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	state := t.TempDir()
	var stderr bytes.Buffer
	env := &cliEnv{stdin: inR, stdout: outW, stderr: &lockedWriter{w: &stderr}, getenv: func(k string) string {
		return map[string]string{"IOH_STATE_DIR": state, "HOME": state, "XDG_CONFIG_HOME": state}[k]
	}}
	code := make(chan int, 1)
	go func() { code <- dispatch(ctx, env, []string{"serve"}); outW.Close() }()
	defer inW.Close()

	editor := jsonrpc2.NewHeaderStream(editorPipe{outR, inW})
	raw := func(s string) {
		if _, err := io.WriteString(inW, s); err != nil {
			t.Fatalf("write: %v", err)
		}
	}
	frame := func(body string) { raw(fmt.Sprintf("Content-Length: %d\r\n\r\n%s", len(body), body)) }
	reply := func(what string, wantCode jsonrpc2.Code) {
		t.Helper()
		for {
			msg, _, err := editor.Read(ctx)
			if err != nil {
				t.Fatalf("%s: read: %v (stderr: %s)", what, err, stderr.String())
			}
			r, ok := msg.(*jsonrpc2.Response)
			if !ok {
				continue // the server's own notifications
			}
			var we *jsonrpc2.Error
			switch {
			case wantCode == 0 && r.Err() != nil:
				t.Errorf("%s: %v, want success", what, r.Err())
			case wantCode != 0 && (!errors.As(r.Err(), &we) || we.Code != wantCode):
				t.Errorf("%s: %v, want code %d", what, r.Err(), wantCode)
			}
			return
		}
	}

	frame(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"processId":null,"rootUri":null,"capabilities":{}}}`)
	reply("initialize", 0)
	frame(`{"jsonrpc":"2.0","method":"initialized","params":{}}`)
	frame(`{"jsonrpc": "2.0", "id": 2, "method": `)
	reply("a body that is not JSON", jsonrpc2.ParseError)
	raw("Content-Length 12\r\n\r\n")
	reply("a header without a colon", jsonrpc2.ParseError)
	frame(`{"jsonrpc":"2.0","id":3,"method":"shutdown"}`)
	reply("shutdown", 0)
	frame(`{"jsonrpc":"2.0","method":"exit"}`)
	select {
	case c := <-code:
		if c != exitOK {
			t.Errorf("serve exited %d, want %d\n%s", c, exitOK, stderr.String())
		}
	case <-ctx.Done():
		t.Fatal("serve did not end after exit")
	}
	if !strings.Contains(stderr.String(), "json-rpc input") {
		t.Errorf("the malformed input was not logged:\n%s", stderr.String())
	}
}
