//go:build unix

package trace

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// The state directory is created 0700 and every file of the store 0600
// whatever the umask; an existing database with wider modes is narrowed.
func TestFileModes(t *testing.T) {
	old := syscall.Umask(0o002) // a permissive umask: would give 0775/0664
	defer syscall.Umask(old)
	ctx := context.Background()
	base := t.TempDir()
	dir := filepath.Join(base, "a", "state")
	path := filepath.Join(dir, "w.db")
	s, err := Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	s.CreateRun(ctx, &RunRow{ID: "r", Root: "r", Goal: "g", Contract: json.RawMessage(`{}`), Outcome: "running", FirstStarted: time.Now()})
	check := func(when string) {
		t.Helper()
		for _, d := range []string{filepath.Join(base, "a"), dir} {
			fi, err := os.Stat(d)
			if err != nil {
				t.Fatal(err)
			}
			if got := fi.Mode().Perm(); got != 0o700 {
				t.Errorf("%s: directory %s has mode %o, want 700", when, d, got)
			}
		}
		files, _ := filepath.Glob(path + "*")
		if len(files) < 3 {
			t.Errorf("%s: files %v, want the database, -wal and -shm", when, files)
		}
		for _, f := range files {
			fi, err := os.Stat(f)
			if err != nil {
				t.Fatal(err)
			}
			if got := fi.Mode().Perm(); got != 0o600 {
				t.Errorf("%s: %s has mode %o, want 600", when, filepath.Base(f), got)
			}
		}
	}
	check("fresh store")
	// Widen them as an older build would have left them: the next open
	// narrows them again (the WAL stays while s is open).
	for _, suf := range []string{"", "-wal", "-shm"} {
		os.Chmod(path+suf, 0o644)
	}
	s2, err := Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	check("reopened")
	s2.Close()
	s.Close()
	// An existing state directory the user chose keeps its mode.
	mine := filepath.Join(base, "mine")
	os.Mkdir(mine, 0o755)
	os.Chmod(mine, 0o755)
	s3, err := Open(ctx, filepath.Join(mine, "w.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	s3.Close()
	if fi, _ := os.Stat(mine); fi.Mode().Perm() != 0o755 {
		t.Errorf("an existing directory's mode changed to %o", fi.Mode().Perm())
	}
}
