package workspace

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// collect reads batches until every wanted path was reported (the test's
// own deadline bounds it; no timing is asserted).
func collect(t *testing.T, w *Watcher, want []string) []string {
	t.Helper()
	seen := map[string]bool{}
	for {
		missing := false
		for _, p := range want {
			if !seen[p] {
				missing = true
			}
		}
		if !missing {
			break
		}
		batch, ok := <-w.Events()
		if !ok {
			t.Fatal("events closed early")
		}
		for _, p := range batch {
			seen[p] = true
		}
	}
	var got []string
	for p := range seen {
		got = append(got, p)
	}
	slices.Sort(got)
	return got
}

func TestWatcher(t *testing.T) {
	r := newTestRoot(t, map[string]string{
		".git/HEAD":   "",
		".gitignore":  "*.log\nbuild/\n",
		"a.txt":       "a",
		"sub/b.txt":   "b",
		"build/x.txt": "",
	})
	w, err := NewWatcher(r, 20*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	d := r.Dir()
	// Ignored changes first: if they were reported they would show up in
	// the batches collected below.
	writeTree(t, d, map[string]string{"x.log": "ignored", "build/y.txt": "ignored", ".git/index": "ignored"})
	writeTree(t, d, map[string]string{"a.txt": "changed", "sub/c.txt": "new"})
	got := collect(t, w, []string{"a.txt", "sub/c.txt"})
	if diff := cmp.Diff(got, []string{"a.txt", "sub/c.txt"}); diff != "" {
		t.Errorf("first batches (-got +want):\n%s", diff)
	}
	// A new directory is watched: a file created in it later is reported.
	if err := os.MkdirAll(filepath.Join(d, "newdir"), 0o755); err != nil {
		t.Fatal(err)
	}
	collect(t, w, []string{"newdir"})
	writeTree(t, d, map[string]string{"newdir/deep.txt": "x"})
	collect(t, w, []string{"newdir/deep.txt"})
	if err := os.Remove(filepath.Join(d, "sub", "b.txt")); err != nil {
		t.Fatal(err)
	}
	collect(t, w, []string{"sub/b.txt"})

	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	for range w.Events() {
		// drain: the channel must be closed after Close
	}
	if err := w.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}
