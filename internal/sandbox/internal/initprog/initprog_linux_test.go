package initprog

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestFind: only a regular file of this build, which only
// root or this user can change, in directories only they can change, is
// taken; anything else leaves the binary re-executing itself, with the
// reason.
//
// The checks never run the file, so its body here is any content; the
// sandbox's tests run the real init program found this way.
func TestFind(t *testing.T) {
	body := []byte("#!/bin/sh\n" + strings.Repeat("ioh-sandbox-init\n", 4096))
	hash := sha256Hex(body)
	install := func(t *testing.T) string {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, Name), body, 0o755); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	cases := []struct {
		name   string
		setup  func(t *testing.T, dir string) string // returns the hash this binary carries
		refuse string                                // part of the reason; "" means taken
	}{
		{"same build (control)", func(t *testing.T, dir string) string { return hash }, ""},
		{"another build", func(t *testing.T, dir string) string { return sha256Hex([]byte("another build")) }, "another build"},
		{"the same build with one byte changed", func(t *testing.T, dir string) string {
			changed := append([]byte(nil), body...)
			changed[len(changed)/2] ^= 1
			os.WriteFile(filepath.Join(dir, Name), changed, 0o755)
			return hash
		}, "its SHA-256 is"},
		{"no hash in this binary", func(t *testing.T, dir string) string { return "" }, "without `make build`"},
		{"missing", func(t *testing.T, dir string) string {
			os.Remove(filepath.Join(dir, Name))
			return hash
		}, "no such file"},
		{"group-writable", func(t *testing.T, dir string) string {
			os.Chmod(filepath.Join(dir, Name), 0o775)
			return hash
		}, "writable by group or others"},
		{"in a directory others can write", func(t *testing.T, dir string) string {
			os.Chmod(dir, 0o777)
			return hash
		}, "writable by group or others"},
		{"a symlink to it", func(t *testing.T, dir string) string {
			real := filepath.Join(dir, "real")
			os.Rename(filepath.Join(dir, Name), real)
			os.Symlink(real, filepath.Join(dir, Name))
			return hash
		}, "symbolic links"},
		{"not executable", func(t *testing.T, dir string) string {
			os.Chmod(filepath.Join(dir, Name), 0o644)
			return hash
		}, "not executable"},
		{"too large to be of this build", func(t *testing.T, dir string) string {
			os.Truncate(filepath.Join(dir, Name), maxSize+1)
			return hash
		}, "bytes, not a program of this build"},
		{"a directory", func(t *testing.T, dir string) string {
			os.Remove(filepath.Join(dir, Name))
			os.Mkdir(filepath.Join(dir, Name), 0o755)
			return hash
		}, "not a regular file"},
	}
	if os.Geteuid() == 0 {
		cases = append(cases, struct {
			name   string
			setup  func(t *testing.T, dir string) string
			refuse string
		}{"owned by another user", func(t *testing.T, dir string) string {
			os.Chown(filepath.Join(dir, Name), 65534, 65534)
			return hash
		}, "owned by uid 65534"})
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := install(t)
			p := Find(dir, c.setup(t, dir))
			if p.File != nil {
				defer p.File.Close()
			}
			if c.refuse == "" {
				if !p.Small {
					t.Fatalf("refused: %s", p.Why)
				}
				// What the stages execute is the file checked.
				if got, err := os.ReadFile(p.Path); err != nil || sha256Hex(got) != hash || p.Dir != dir {
					t.Fatalf("taken as %s in %s (%v): not the file checked", p.Path, p.Dir, err)
				}
				return
			}
			if p.Small || p.Path != "/proc/self/exe" {
				t.Fatalf("taken: %+v", p)
			}
			if !strings.Contains(p.Why, c.refuse) {
				t.Fatalf("why = %q, want it to say %q", p.Why, c.refuse)
			}
		})
	}
}

func sha256Hex(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}
