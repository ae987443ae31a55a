package rootfs

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// TestMountPoint: a mount point is made with its missing parents, as a
// directory or an empty file, and what is there already is kept as it
// is, even a file where a directory was asked for (mount judges it).
func TestMountPoint(t *testing.T) {
	root := t.TempDir()
	dir, file := filepath.Join(root, "a/b/c"), filepath.Join(root, "x/y/f")
	if err := MountPoint(dir, true); err != nil {
		t.Fatal(err)
	}
	if err := MountPoint(file, false); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		t.Errorf("directory mount point: %v %v", st, err)
	}
	if st, err := os.Stat(file); err != nil || !st.Mode().IsRegular() || st.Size() != 0 {
		t.Errorf("file mount point: %v %v", st, err)
	}
	kept := filepath.Join(root, "kept")
	if err := os.WriteFile(kept, []byte("data"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := MountPoint(kept, true); err != nil {
		t.Errorf("an existing file as a directory mount point: %v", err)
	}
	if b, err := os.ReadFile(kept); err != nil || string(b) != "data" {
		t.Errorf("existing file changed: %q %v", b, err)
	}
	if err := MountPoint(filepath.Join(kept, "below"), true); err == nil {
		t.Error("a mount point below a file was made")
	}
}

// TestCreateFile: the file is made with its data and mode; an existing
// file, or a symlink in its place, is refused and left unchanged.
func TestCreateFile(t *testing.T) {
	root := t.TempDir()
	p := filepath.Join(root, "bootid")
	if err := CreateFile(p, 0o444, []byte("id\n")); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(p); err != nil || string(b) != "id\n" {
		t.Errorf("content: %q %v", b, err)
	}
	if st, err := os.Stat(p); err != nil || st.Mode().Perm() != 0o444 {
		t.Errorf("mode: %v %v", st, err)
	}
	if err := CreateFile(p, 0o444, []byte("other")); !errors.Is(err, os.ErrExist) {
		t.Errorf("existing file: %v", err)
	}
	target := filepath.Join(root, "target")
	link := filepath.Join(root, "link")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	if err := CreateFile(link, 0o644, []byte("x")); err == nil {
		t.Error("created through a symlink")
	}
	if _, err := os.Lstat(target); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("symlink target made: %v", err)
	}
}
