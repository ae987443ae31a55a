package jsonrpc_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"testing"

	"github.com/ioh-lsp/ioh-lsp/internal/jsonrpc"
)

// FuzzHeaderFramer feeds arbitrary bytes to the Content-Length reader:
// it never panics, every Read consumes input (so it ends at the end of
// the input), and it ends with EOF or an unexpected EOF.
func FuzzHeaderFramer(f *testing.F) {
	for _, seed := range []string{
		"Content-Length: 2\r\n\r\n{}",
		"Content-Length: 40\r\n\r\n{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"x\"}   ",
		"Content-Length: 5\r\n\r\n{\"a\":Content-Length: 2\r\n\r\n[]",
		"garbage\r\n\r\nContent-Length: 2\r\n\r\n{}",
		"Content-Length: -1\r\n\r\n",
		"Content-Length: 99999999999999999999\r\n\r\n",
		"\r\n\r\nContent-Type: x\r\n\r\n",
		"content-length:3\n\n{}}Content-Length: 1\r\n\r\n{",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		fr := jsonrpc.HeaderFramer(bytes.NewReader(data), io.Discard, 1<<10)
		for i := 0; ; i++ {
			if i > len(data)+1 {
				t.Fatalf("%d reads from %d bytes: the reader does not consume its input", i, len(data))
			}
			_, err := fr.Read()
			var fe *jsonrpc.FrameError
			if err == nil || errors.As(err, &fe) {
				continue
			}
			if !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
				t.Fatalf("Read ended with %v, want EOF or unexpected EOF", err)
			}
			return
		}
	})
}

// FuzzDispatch: any line gets at most one answer, a single JSON-RPC 2.0
// line with an id; nothing panics.
func FuzzDispatch(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"echo","params":{}}`,
		`{"jsonrpc":"2.0","method":"note"}`,
		`{"jsonrpc":"2.0","id":"x","result":{}}`,
		`{"jsonrpc":"2.0","id":null,"method":"fail"}`,
		`{not json`, `[]`, `null`, `"s"`, `{"id":{}}`, `{"jsonrpc":"2.0","id":1e400,"method":"echo"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		if bytes.ContainsAny(line, "\r\n") {
			return
		}
		var out bytes.Buffer
		c := jsonrpc.NewConn(jsonrpc.LineFramer(bytes.NewReader(append(line, '\n')), &out, 1<<20), jsonrpc.Options{Logger: slog.New(slog.DiscardHandler)})
		if err := c.Serve(context.Background(), echo); err != nil {
			t.Fatalf("Serve: %v", err)
		}
		if out.Len() == 0 {
			return
		}
		lines := bytes.Split(bytes.TrimSuffix(out.Bytes(), []byte("\n")), []byte("\n"))
		if len(lines) != 1 {
			t.Fatalf("%q got %d answers", line, len(lines))
		}
		var m struct {
			JSONRPC string          `json:"jsonrpc"`
			ID      json.RawMessage `json:"id"`
		}
		if err := json.Unmarshal(lines[0], &m); err != nil || m.JSONRPC != "2.0" || len(m.ID) == 0 {
			t.Fatalf("%q got a bad answer %q (%v)", line, lines[0], err)
		}
	})
}
