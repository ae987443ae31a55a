//go:build unix

package regfile

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestReadRegularFilesUpToTheCap(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "f")
	if err := os.WriteFile(p, []byte("12345"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, err := Read(p, 5); err != nil || string(got) != "12345" {
		t.Fatalf("Read at the cap = %q, %v", got, err)
	}
	if _, err := Read(p, 4); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("Read over the cap: got %v, want ErrTooLarge", err)
	}
	if _, err := Read(filepath.Join(dir, "missing"), 5); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("Read of a missing file: got %v, want ErrNotExist", err)
	}
}

// TestRefusesWhatIsNotARegularFile: a device, a directory, a symlink to a
// device and a FIFO are refused, the FIFO without blocking (the test has
// a deadline: a blocking open would hang it).
func TestRefusesWhatIsNotARegularFile(t *testing.T) {
	dir := t.TempDir()
	link := filepath.Join(dir, "zero-link")
	if err := os.Symlink("/dev/zero", link); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	// Control: /dev/zero reads endlessly with a plain open.
	if f, err := os.Open("/dev/zero"); err != nil {
		t.Fatal(err)
	} else {
		buf := make([]byte, 1<<16)
		n, err := f.Read(buf)
		f.Close()
		if err != nil || n != len(buf) {
			t.Fatalf("control: /dev/zero read %d, %v", n, err)
		}
	}
	for _, tc := range []struct{ path, kind string }{
		{"/dev/zero", "character device"}, {dir, "directory"}, {link, "character device"}, {fifo, "FIFO"},
	} {
		done := make(chan error, 1)
		go func() { _, err := Read(tc.path, 1<<20); done <- err }()
		select {
		case err := <-done:
			if !errors.Is(err, ErrNotRegular) || !strings.Contains(err.Error(), tc.kind) {
				t.Errorf("Read(%s) = %v, want ErrNotRegular naming a %s", tc.path, err, tc.kind)
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("Read(%s) blocked", tc.path)
		}
	}
}
