package acp

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"sync"
	"testing"
)

// FuzzDispatch: any line gets at most one answer, each a single JSON-RPC
// 2.0 line; nothing panics.
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
		var out bytes.Buffer
		c := newConn(&out, slog.New(slog.DiscardHandler))
		var wg sync.WaitGroup
		c.dispatch(context.Background(), line, &echo{}, &wg)
		wg.Wait()
		c.out.close()
		lines := bytes.Split(bytes.TrimSuffix(out.Bytes(), []byte("\n")), []byte("\n"))
		if out.Len() == 0 {
			return
		}
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
