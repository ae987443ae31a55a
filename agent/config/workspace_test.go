package config

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// TestTaskWorkspace: the git root above the task file, else its
// directory; the file-system root and the user's home directory (also
// through a symlink) are refused, and the controls below them are not.
func TestTaskWorkspace(t *testing.T) {
	base := t.TempDir()
	home := filepath.Join(base, "home")
	repo := filepath.Join(base, "repo")
	for _, d := range []string{filepath.Join(home, "proj"), filepath.Join(repo, ".git"), filepath.Join(repo, "a", "b")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
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
		file, home, want string
		err              bool
	}{
		{file: filepath.Join(repo, "a", "b", "t.ioh.yaml"), home: home, want: repo},
		{file: filepath.Join(home, "proj", "t.ioh.yaml"), home: home, want: filepath.Join(home, "proj")},
		{file: filepath.Join(home, "t.ioh.yaml"), home: home, err: true},
		{file: filepath.Join(home, "t.ioh.yaml"), home: link, err: true},
		{file: filepath.Join(link, "t.ioh.yaml"), home: home, err: true},
	} {
		got, err := TaskWorkspace(tc.file, env(tc.home))
		switch {
		case tc.err && !errors.Is(err, ErrWorkspaceTooWide):
			t.Errorf("TaskWorkspace(%s) with HOME=%s = %q, %v; want ErrWorkspaceTooWide", tc.file, tc.home, got, err)
		case !tc.err && (err != nil || got != tc.want):
			t.Errorf("TaskWorkspace(%s) = %q, %v; want %q", tc.file, got, err, tc.want)
		}
	}
	if err := CheckWorkspace("/", env(home)); !errors.Is(err, ErrWorkspaceTooWide) {
		t.Errorf("CheckWorkspace(/) = %v, want ErrWorkspaceTooWide", err)
	}
	if err := CheckWorkspace(filepath.Join(home, "proj"), env(home)); err != nil {
		t.Errorf("control: CheckWorkspace(HOME/proj) = %v", err)
	}
}
