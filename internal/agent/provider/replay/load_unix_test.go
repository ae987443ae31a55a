//go:build unix

package replay

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestLoadRefusesNonCassettesWithoutRevealingThem: a device or a FIFO is
// refused before it is read (a FIFO without blocking), an oversized file
// by its size, and a file that is not JSON by position only: none of its
// bytes appear in the error.
func TestLoadRefusesNonCassettesWithoutRevealingThem(t *testing.T) {
	dir := t.TempDir()
	secret := filepath.Join(dir, "id_key")
	if err := os.WriteFile(secret, []byte("Zq9-private-key-material\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	big := filepath.Join(dir, "big.json")
	if err := os.WriteFile(big, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(big, MaxSize+1); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ path, want string }{
		{"/dev/zero", "not a regular file"},
		{fifo, "not a regular file"},
		{big, "file too large"},
		{secret, "not valid JSON at byte 1"},
	} {
		done := make(chan error, 1)
		go func() { _, err := Load(tc.path); done <- err }()
		var err error
		select {
		case err = <-done:
		case <-time.After(30 * time.Second):
			t.Fatalf("Load(%s) blocked", tc.path)
		}
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Load(%s) = %v, want %q", tc.path, err, tc.want)
		}
		if err != nil && (strings.Contains(err.Error(), "Zq9") || strings.Contains(err.Error(), "'Z'")) {
			t.Errorf("Load(%s) error reveals the content: %v", tc.path, err)
		}
	}
}
