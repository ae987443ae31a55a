package rootfs

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// TestResolve: a host path is resolved as the host would, reading the
// tree at root: an absolute link target starts again at root (never at
// this machine's /), a relative one at the link's directory, ".." goes
// up; a missing path is os.ErrNotExist and a loop is ELOOP. The plain
// memo takes the non-links seen, and a path in it is not looked at again.
func TestResolve(t *testing.T) {
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "a/b"), 0o755); err != nil {
		t.Fatal(err)
	}
	for l, target := range map[string]string{"abs": "/a", "a/rel": "b", "a/up": "../a/b", "loop": "loop", "etc": "/etc-not-here"} {
		if err := os.Symlink(target, filepath.Join(root, l)); err != nil {
			t.Fatal(err)
		}
	}
	for p, want := range map[string]string{"/a/b": "/a/b", "/abs/b": "/a/b", "/abs/rel": "/a/b", "/a/up": "/a/b", "/a/./b/../b": "/a/b"} {
		if got, err := Resolve(root, p, nil); err != nil || got != want {
			t.Errorf("Resolve(%s) = %q, %v; want %q", p, got, err, want)
		}
	}
	if _, err := Resolve(root, "/etc/passwd", nil); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a link to a target missing below root: %v, want not exist (it must not resolve on this machine's /etc)", err)
	}
	if _, err := Resolve(root, "/loop", nil); !errors.Is(err, unix.ELOOP) {
		t.Errorf("a link loop: %v, want ELOOP", err)
	}
	plain := map[string]bool{}
	if _, err := Resolve(root, "/a/b", plain); err != nil || !plain["/a"] || !plain["/a/b"] {
		t.Errorf("plain after /a/b: %v %v", plain, err)
	}
	plain["/abs"] = true // taken as plain: not read again
	if got, err := Resolve(root, "/abs", plain); err != nil || got != "/abs" {
		t.Errorf("a path in plain was looked at again: %q %v", got, err)
	}
}
