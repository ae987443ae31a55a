package sandbox

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func writeTree(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for name, body := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func readTree(t *testing.T, root string) map[string]string {
	t.Helper()
	got := map[string]string{}
	filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		b, _ := os.ReadFile(p)
		got[filepath.ToSlash(rel)] = string(b)
		return nil
	})
	return got
}

func TestStageBadChanges(t *testing.T) {
	lower := t.TempDir()
	writeTree(t, lower, map[string]string{"a/b.txt": "b", "f": "f"})
	for _, tc := range []struct {
		name    string
		changes []Change
	}{
		{"empty path", []Change{{Path: ""}}},
		{"absolute", []Change{{Path: "/etc/passwd"}}},
		{"dotdot", []Change{{Path: "../x"}}},
		{"inner dotdot", []Change{{Path: "a/../../x"}}},
		{"dot", []Change{{Path: "."}}},
		{"backslash", []Change{{Path: `a\b`}}},
		{"parent is a file", []Change{{Path: "f/x", Content: []byte("x")}}},
		{"parent deleted", []Change{{Path: "a", Delete: true}, {Path: "a/c.txt", Content: []byte("c")}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := NewStage(lower, tc.changes)
			if err == nil {
				s.Close()
				t.Fatal("NewStage accepted the change")
			}
			if !errors.Is(err, ErrBadChange) {
				t.Errorf("err = %v, want ErrBadChange", err)
			}
		})
	}
	if _, err := NewStage(filepath.Join(lower, "f"), nil); err == nil {
		t.Error("a file was accepted as the staged directory")
	}
}

func TestStageMaterialize(t *testing.T) {
	lower := t.TempDir()
	writeTree(t, lower, map[string]string{"keep": "k", "edit": "old", "gone": "g", "dir/x": "x", "dir/y": "y"})
	s, err := NewStage(lower, []Change{
		{Path: "edit", Content: []byte("new")},
		{Path: "gone", Delete: true},
		{Path: "dir/x", Delete: true},
		{Path: "fresh/deep/file", Content: []byte("f"), Mode: 0o755},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	view := filepath.Join(t.TempDir(), "view")
	if err := s.materialize(view); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"keep": "k", "edit": "new", "dir/y": "y", "fresh/deep/file": "f"}
	if diff := cmp.Diff(readTree(t, view), want); diff != "" {
		t.Errorf("view (-got +want):\n%s", diff)
	}
	if fi, err := os.Stat(filepath.Join(view, "fresh/deep/file")); err != nil || fi.Mode().Perm() != 0o755 {
		t.Errorf("mode of a staged file: %v %v, want 0755", fi.Mode(), err)
	}
	if diff := cmp.Diff(readTree(t, lower), map[string]string{"keep": "k", "edit": "old", "gone": "g", "dir/x": "x", "dir/y": "y"}); diff != "" {
		t.Errorf("lower changed (-got +want):\n%s", diff)
	}
	upper := s.upper
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(upper); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Close left the change directory: %v", err)
	}
}
