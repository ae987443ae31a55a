package workspace

import (
	"bytes"
	"context"
	"os"
	"path"
	"testing"
	"time"
)

// TestIndexKeepsSecretsOut checks that the index file under the state
// directory never holds the trigrams of a configured secret or of a file
// the read policy guards, while searches still find them (those files are
// read directly). The control: an ordinary file's words are in the index.
func TestIndexKeepsSecretsOut(t *testing.T) {
	state := indexWorld(t)
	const secret = "sk-QZXJVW-0123456789-qzxjvw"
	const guarded = "ZZ-GUARDED-9876-zz"
	r := newTestRoot(t, map[string]string{
		".git/HEAD": "",
		"cfg.go":    "package cfg\n\nvar key = \"" + secret + "\"\n",
		".env":      "TOKEN=" + guarded + "\n",
		"plain.go":  "package plain // QQWYVX marker\n",
	})
	time.Sleep(time.Duration(racySlack) + 50*time.Millisecond)
	o := IndexOptions{StateDir: state, Secrets: []string{secret},
		Private: func(rel string) bool { return path.Base(rel) == ".env" }}
	if _, err := BuildIndex(context.Background(), r, o); err != nil {
		t.Fatal(err)
	}
	d, err := loadIndex(indexPath(state, r.Dir()))
	if err != nil {
		t.Fatal(err)
	}
	defer d.unmap()
	// holds reports whether any file's posting list has every trigram of s.
	holds := func(s string) bool {
		for i := 0; i+3 <= len(s); i++ {
			t3 := trigram(s[i])<<16 | trigram(s[i+1])<<8 | trigram(s[i+2])
			found := false
			for si := range d.segs {
				ids, err := d.segs[si].postings(t3)
				if err != nil {
					t.Fatal(err)
				}
				if len(ids) > 0 {
					found = true
				}
			}
			if !found {
				return false
			}
		}
		return true
	}
	if !holds("QQWYVX marker") {
		t.Fatal("control: an ordinary file's words are not in the index; the check proves nothing")
	}
	for _, s := range []string{secret, guarded} {
		if holds(s) {
			t.Errorf("the index file holds every trigram of %q", s)
		}
	}
	raw, err := os.ReadFile(indexPath(state, r.Dir()))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{secret, guarded} {
		if bytes.Contains(raw, []byte(s)) {
			t.Errorf("the index file holds %q verbatim", s)
		}
	}
	x, err := OpenIndex(r, IndexOptions{StateDir: state})
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	for _, s := range []string{secret, guarded} {
		ms, err := r.Grep(context.Background(), GrepOptions{Pattern: s, Literal: true})
		if err != nil {
			t.Fatal(err)
		}
		if len(ms) != 1 {
			t.Errorf("grep %q through the index: %d matches, want 1 (unindexed files are read directly)", s, len(ms))
		}
	}
}
