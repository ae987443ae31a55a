package workspace

import (
	"os"
	"path/filepath"
	"testing"
)

// writeTree creates files (path → content) under dir; a path ending in "/"
// creates a directory.
func writeTree(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for p, content := range files {
		abs := filepath.Join(dir, filepath.FromSlash(p))
		if p[len(p)-1] == '/' {
			if err := os.MkdirAll(abs, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(abs), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(abs, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// newTestRoot makes a root over a fresh temp dir holding files.
func newTestRoot(t *testing.T, files map[string]string) *Root {
	t.Helper()
	dir := t.TempDir()
	writeTree(t, dir, files)
	r, err := NewRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func readDisk(t *testing.T, r *Root, rel string) (string, bool) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(r.Dir(), filepath.FromSlash(rel)))
	if os.IsNotExist(err) {
		return "", false
	}
	if err != nil {
		t.Fatal(err)
	}
	return string(b), true
}
