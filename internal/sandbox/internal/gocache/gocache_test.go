package gocache

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ioh-lsp/ioh-lsp/internal/sandbox/sandboxtest"
)

// TestGoCacheProtocol drives Serve with the go command's messages: a get
// of an action the host cache holds answers with the host's own output
// file; a put lands in the private cache only, and a later get finds it
// there; an unknown action, a truncated entry and an entry whose output
// file has the wrong size are misses; the host cache is left as it was.
func TestGoCacheProtocol(t *testing.T) {
	host, private := t.TempDir(), t.TempDir()
	id := bytes.Repeat([]byte{0xab}, 32)
	out := bytes.Repeat([]byte{0xcd}, 32)
	body := []byte("compiled package")
	if _, err := cacheStore(host, id, out, body); err != nil {
		t.Fatal(err)
	}
	short := bytes.Repeat([]byte{0x11}, 32) // entry cut short
	os.MkdirAll(filepath.Dir(cacheFile(host, short, "a")), 0o755)
	os.WriteFile(cacheFile(host, short, "a"), []byte("v1 1111"), 0o644)
	wrongSize := bytes.Repeat([]byte{0x22}, 32) // output file not the size the entry says
	if _, err := cacheStore(host, wrongSize, bytes.Repeat([]byte{0x33}, 32), []byte("x")); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(cacheFile(host, bytes.Repeat([]byte{0x33}, 32), "d"), []byte("xy"), 0o644)
	before := sandboxtest.TreeListing(t, host)

	newID := bytes.Repeat([]byte{0x44}, 32)
	newOut := bytes.Repeat([]byte{0x55}, 32)
	var in bytes.Buffer
	enc := json.NewEncoder(&in)
	enc.Encode(cacheRequest{ID: 1, Command: "get", ActionID: id})
	enc.Encode(cacheRequest{ID: 2, Command: "get", ActionID: newID})
	enc.Encode(cacheRequest{ID: 3, Command: "put", ActionID: newID, OutputID: newOut, BodySize: 3})
	enc.Encode([]byte("new"))
	enc.Encode(cacheRequest{ID: 4, Command: "get", ActionID: newID})
	enc.Encode(cacheRequest{ID: 5, Command: "get", ActionID: short})
	enc.Encode(cacheRequest{ID: 6, Command: "get", ActionID: wrongSize})
	enc.Encode(cacheRequest{ID: 7, Command: "close"})
	var outBuf bytes.Buffer
	if err := Serve(&in, &outBuf, host, private); err != nil {
		t.Fatal(err)
	}
	got := map[int64]cacheResponse{}
	sc := bufio.NewScanner(&outBuf)
	for sc.Scan() {
		var r cacheResponse
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("response %q: %v", sc.Text(), err)
		}
		got[r.ID] = r
	}
	if k := got[0].KnownCommands; strings.Join(k, ",") != "get,put,close" {
		t.Errorf("announced commands %v", k)
	}
	if r := got[1]; r.Miss || r.DiskPath != cacheFile(host, out, "d") || !bytes.Equal(r.OutputID, out) || r.Size != int64(len(body)) {
		t.Errorf("get of a host entry: %+v", r)
	}
	if !got[2].Miss {
		t.Errorf("get of an unknown action: %+v, want a miss", got[2])
	}
	if r := got[3]; r.Err != "" || r.DiskPath != cacheFile(private, newOut, "d") {
		t.Errorf("put: %+v", r)
	} else if b, _ := os.ReadFile(r.DiskPath); string(b) != "new" {
		t.Errorf("put stored %q", b)
	}
	if r := got[4]; r.Miss || r.DiskPath != cacheFile(private, newOut, "d") || r.Size != 3 {
		t.Errorf("get after put: %+v", r)
	}
	for _, id := range []int64{5, 6} {
		if !got[id].Miss {
			t.Errorf("request %d (a damaged entry): %+v, want a miss", id, got[id])
		}
	}
	if _, ok := got[7]; !ok {
		t.Error("close was not answered")
	}
	if after := sandboxtest.TreeListing(t, host); after != before {
		t.Errorf("the host cache changed:\nbefore %s\nafter  %s", before, after)
	}
}
