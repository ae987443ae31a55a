package lsp

import (
	"bytes"
	"fmt"
	"path/filepath"
	"sort"
	"sync"

	"go.lsp.dev/protocol"
	"go.lsp.dev/uri"
)

// document is one open editor buffer.
type document struct {
	uri     uri.URI
	path    string // absolute file path
	version int32
	text    []byte
	prev    []byte // the text before the latest change (nil before any)
}

// documents holds the open buffers. Only the ordered notification path
// writes to it; requests read snapshots.
type documents struct {
	mu      sync.Mutex
	docs    map[uri.URI]*document
	changed chan struct{} // closed and replaced on every open, change and close
}

func newDocuments() *documents {
	return &documents{docs: map[uri.URI]*document{}, changed: make(chan struct{})}
}

// bump wakes the waiters of changes; called with d.mu held.
func (d *documents) bump() {
	close(d.changed)
	d.changed = make(chan struct{})
}

// changes is a channel closed at the next open, change or close.
func (d *documents) changes() <-chan struct{} {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.changed
}

// pathOf maps a file URI to an absolute path.
func pathOf(u uri.URI) (string, error) {
	if !u.IsFile() {
		return "", fmt.Errorf("not a file uri: %q", string(u))
	}
	p := u.FsPath()
	if !filepath.IsAbs(p) {
		return "", fmt.Errorf("not an absolute file uri: %q", string(u))
	}
	return filepath.Clean(p), nil
}

func (d *documents) open(u uri.URI, version int32, text string) (*document, error) {
	p, err := pathOf(u)
	if err != nil {
		return nil, err
	}
	doc := &document{uri: u, path: p, version: version, text: []byte(text)}
	d.mu.Lock()
	d.docs[u] = doc
	d.bump()
	d.mu.Unlock()
	return doc.snapshot(), nil
}

// change applies content changes in order and returns the new snapshot.
func (d *documents) change(u uri.URI, version int32, changes []protocol.TextDocumentContentChangeEvent) (*document, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	doc, ok := d.docs[u]
	if !ok {
		return nil, fmt.Errorf("change to a document that is not open: %s", u)
	}
	text := doc.text
	for i, c := range changes {
		switch c := c.(type) {
		case *protocol.TextDocumentContentChangeWholeDocument:
			text = []byte(c.Text)
		case *protocol.TextDocumentContentChangePartial:
			starts := lineStarts(text)
			start := offsetOf(text, starts, c.Range.Start)
			end := offsetOf(text, starts, c.Range.End)
			if end < start {
				return nil, fmt.Errorf("change %d to %s: range end before start", i, u)
			}
			next := make([]byte, 0, len(text)-(end-start)+len(c.Text))
			next = append(next, text[:start]...)
			next = append(next, c.Text...)
			next = append(next, text[end:]...)
			text = next
		default:
			return nil, fmt.Errorf("change %d to %s: unknown change kind %T", i, u, c)
		}
	}
	if !bytes.Equal(text, doc.text) {
		doc.prev = doc.text // a save with the same text keeps the one before
	}
	doc.text = text
	doc.version = version
	d.bump()
	return doc.snapshot(), nil
}

func (d *documents) close(u uri.URI) (*document, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	doc, ok := d.docs[u]
	delete(d.docs, u)
	d.bump()
	return doc, ok
}

// get returns a snapshot of the open document at u.
func (d *documents) get(u uri.URI) (*document, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	doc, ok := d.docs[u]
	if !ok {
		return nil, false
	}
	return doc.snapshot(), true
}

// byPath returns the open document for an absolute path.
func (d *documents) byPath(p string) (*document, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, doc := range d.docs {
		if doc.path == p {
			return doc.snapshot(), true
		}
	}
	return nil, false
}

// all returns snapshots of every open document, sorted by path.
func (d *documents) all() []*document {
	d.mu.Lock()
	out := make([]*document, 0, len(d.docs))
	for _, doc := range d.docs {
		out = append(out, doc.snapshot())
	}
	d.mu.Unlock()
	sort.Slice(out, func(i, j int) bool { return out[i].path < out[j].path })
	return out
}

// snapshot copies the header; text is never mutated in place, so sharing
// the slice is safe.
func (doc *document) snapshot() *document {
	c := *doc
	return &c
}
