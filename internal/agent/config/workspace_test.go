package config

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// TestCheckWorkspace: the file-system root and the user's home directory
// (also through a symlink, either way) are refused; the controls below
// them are not.
func TestCheckWorkspace(t *testing.T) {
	base := t.TempDir()
	home := filepath.Join(base, "home")
	if err := os.MkdirAll(filepath.Join(home, "proj"), 0o755); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(base, "homelink")
	if err := os.Symlink(home, link); err != nil {
		t.Fatal(err)
	}
	env := func(h string) func(string) string {
		return func(k string) string {
			if k == "HOME" {
				return h
			}
			return ""
		}
	}
	for _, tc := range []struct {
		root, home string
		err        bool
	}{
		{root: "/", home: home, err: true},
		{root: home, home: home, err: true},
		{root: home, home: link, err: true},
		{root: link, home: home, err: true},
		{root: filepath.Join(home, "proj"), home: home},
		{root: filepath.Join(link, "proj"), home: home},
		{root: base, home: home},
	} {
		err := CheckWorkspace(tc.root, env(tc.home))
		if tc.err != errors.Is(err, ErrWorkspaceTooWide) {
			t.Errorf("CheckWorkspace(%s) with HOME=%s = %v; refused: want %v", tc.root, tc.home, err, tc.err)
		}
	}
}
