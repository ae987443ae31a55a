// Package gocache is the Go build cache the go command inside a landlock
// or floor run uses as its GOCACHEPROG (cmd/go/internal/cacheprog): it
// reads the host's Go build cache in place, never writing it, and keeps
// what the run stores in a private directory, in the go command's own
// on-disk layout. It is the scratch layer of the tiers that have no mount
// namespace for an overlay. The sandbox runs it as a re-executed stage
// (Main) and decides when a run gets it (goCacheScratch in
// internal/sandbox); this package knows nothing of a run.
package gocache

import (
	"bufio"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// cacheRequest and cacheResponse are the GOCACHEPROG protocol's messages
// (cmd/go/internal/cacheprog): one JSON object a line each way; a put
// with a body is followed by the body as a base64 JSON string.
type cacheRequest struct {
	ID       int64
	Command  string
	ActionID []byte `json:",omitempty"`
	OutputID []byte `json:",omitempty"`
	BodySize int64  `json:",omitempty"`
}

type cacheResponse struct {
	ID            int64
	Err           string     `json:",omitempty"`
	KnownCommands []string   `json:",omitempty"`
	Miss          bool       `json:",omitempty"`
	OutputID      []byte     `json:",omitempty"`
	Size          int64      `json:",omitempty"`
	Time          *time.Time `json:",omitempty"`
	DiskPath      string     `json:",omitempty"`
}

// Main serves the protocol on stdin and stdout: args are the host cache
// (read only) and the private one (read and written). It returns the
// stage's exit code.
func Main(args []string) int {
	if len(args) != 2 {
		fmt.Fprintln(os.Stderr, "ioh-lsp sandbox: gocache: want the host and the private cache directories")
		return 2
	}
	if err := Serve(os.Stdin, os.Stdout, args[0], args[1]); err != nil {
		fmt.Fprintf(os.Stderr, "ioh-lsp sandbox: gocache: %v\n", err)
		return 1
	}
	return 0
}

// Serve answers the go command's requests on in and out until close or
// the end of in. A get looks in the private cache, then in the host's; a
// put stores in the private cache, in the go command's own on-disk layout
// (so a later go command of the same run that uses the private directory
// as its GOCACHE finds it too).
func Serve(in io.Reader, out io.Writer, host, private string) error {
	w := bufio.NewWriter(out)
	enc := json.NewEncoder(w)
	send := func(r cacheResponse) error {
		if err := enc.Encode(r); err != nil {
			return err
		}
		return w.Flush()
	}
	if err := send(cacheResponse{KnownCommands: []string{"get", "put", "close"}}); err != nil {
		return fmt.Errorf("announce: %w", err)
	}
	dec := json.NewDecoder(bufio.NewReader(in))
	for {
		var req cacheRequest
		if err := dec.Decode(&req); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return fmt.Errorf("read request: %w", err)
		}
		resp := cacheResponse{ID: req.ID}
		switch req.Command {
		case "get":
			e, ok := cacheLookup(private, req.ActionID)
			if !ok {
				e, ok = cacheLookup(host, req.ActionID)
			}
			if ok {
				resp.OutputID, resp.Size, resp.Time, resp.DiskPath = e.out, e.size, &e.time, e.path
			} else {
				resp.Miss = true
			}
		case "put":
			var body []byte
			if req.BodySize > 0 {
				if err := dec.Decode(&body); err != nil {
					return fmt.Errorf("read body of request %d: %w", req.ID, err)
				}
			}
			if int64(len(body)) != req.BodySize {
				resp.Err = fmt.Sprintf("body of %d bytes, announced %d", len(body), req.BodySize)
			} else if p, err := cacheStore(private, req.ActionID, req.OutputID, body); err != nil {
				resp.Err = err.Error()
			} else {
				resp.DiskPath = p
			}
		case "close":
			return send(resp)
		default:
			resp.Err = fmt.Sprintf("unknown command %q", req.Command)
		}
		if err := send(resp); err != nil {
			return fmt.Errorf("answer request %d: %w", req.ID, err)
		}
	}
}

// cacheEntry is one action's record in a go build cache directory.
type cacheEntry struct {
	out  []byte
	size int64
	time time.Time
	path string // the output file
}

// cacheFile is where the go command keeps id's file of kind ("a" for the
// action entry, "d" for an output) under dir.
func cacheFile(dir string, id []byte, kind string) string {
	h := hex.EncodeToString(id)
	return filepath.Join(dir, h[:2], h+"-"+kind)
}

// cacheLookup reads action id's entry in dir: "v1 <id> <output id> <size>
// <unix nanoseconds>\n", the two numbers space-padded to 20 bytes, and
// checks that the output file is there with that size. Anything else is a
// miss, as it is for the go command.
func cacheLookup(dir string, id []byte) (cacheEntry, bool) {
	if len(id) == 0 {
		return cacheEntry{}, false
	}
	b, err := os.ReadFile(cacheFile(dir, id, "a"))
	if err != nil {
		return cacheEntry{}, false
	}
	f := strings.Fields(string(b))
	if len(f) != 5 || f[0] != "v1" || f[1] != hex.EncodeToString(id) || !strings.HasSuffix(string(b), "\n") {
		return cacheEntry{}, false
	}
	out, err1 := hex.DecodeString(f[2])
	size, err2 := strconv.ParseInt(f[3], 10, 64)
	nano, err3 := strconv.ParseInt(f[4], 10, 64)
	if err1 != nil || err2 != nil || err3 != nil || len(out) != len(id) || size < 0 {
		return cacheEntry{}, false
	}
	p := cacheFile(dir, out, "d")
	if st, err := os.Stat(p); err != nil || !st.Mode().IsRegular() || st.Size() != size {
		return cacheEntry{}, false
	}
	return cacheEntry{out: out, size: size, time: time.Unix(0, nano), path: p}, true
}

// cacheStore writes body as output out of action id in dir, each file
// through a temporary one renamed into place, and returns the output
// file's path.
func cacheStore(dir string, id, out, body []byte) (string, error) {
	if len(id) == 0 || len(out) == 0 {
		return "", errors.New("put without an action or output id")
	}
	p := cacheFile(dir, out, "d")
	if err := writeCacheFile(p, body); err != nil {
		return "", err
	}
	entry := fmt.Sprintf("v1 %x %x %20d %20d\n", id, out, len(body), time.Now().UnixNano())
	if err := writeCacheFile(cacheFile(dir, id, "a"), []byte(entry)); err != nil {
		return "", err
	}
	return p, nil
}

func writeCacheFile(p string, b []byte) error {
	if err := os.MkdirAll(filepath.Dir(p), 0o777); err != nil {
		return fmt.Errorf("store: %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(p), ".put-")
	if err != nil {
		return fmt.Errorf("store: %w", err)
	}
	_, err = tmp.Write(b)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), p)
	}
	if err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("store %s: %w", filepath.Base(p), err)
	}
	return nil
}
