package workspace

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestApply(t *testing.T) {
	r := newTestRoot(t, map[string]string{"a.txt": "a\n", "b.txt": "b\n", "old.txt": "moved\n", "gone.txt": "x\n"})
	if err := os.Chmod(filepath.Join(r.Dir(), "a.txt"), 0o755); err != nil {
		t.Fatal(err)
	}
	c := NewChangeSet(r)
	steps := []error{
		c.WriteFile("a.txt", []byte("A\n")),
		c.WriteFile("new/dir/n.txt", []byte("n\n")),
		c.Delete("gone.txt"),
		c.Rename("old.txt", "sub/new.txt"),
	}
	for _, err := range steps {
		if err != nil {
			t.Fatal(err)
		}
	}
	if conf, err := c.Conflicts(); err != nil || len(conf) != 0 {
		t.Fatalf("Conflicts = %v, %v", conf, err)
	}
	if err := c.Apply(); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"a.txt": "A\n", "b.txt": "b\n", "new/dir/n.txt": "n\n", "sub/new.txt": "moved\n", "gone.txt": "<none>", "old.txt": "<none>"}
	for rel, w := range want {
		got, ok := readDisk(t, r, rel)
		if !ok {
			got = "<none>"
		}
		if diff := cmp.Diff(got, w); diff != "" {
			t.Errorf("%s (-got +want):\n%s", rel, diff)
		}
	}
	if fi, err := os.Stat(filepath.Join(r.Dir(), "a.txt")); err != nil || fi.Mode().Perm() != 0o755 {
		t.Errorf("mode after apply: %v, %v", fi.Mode(), err)
	}
	if c.Len() != 0 {
		t.Errorf("change set not empty after Apply: %d", c.Len())
	}
	matches, _ := filepath.Glob(filepath.Join(r.Dir(), ".ioh-*"))
	if len(matches) != 0 {
		t.Errorf("temp files left: %v", matches)
	}
}

func TestApplyConflict(t *testing.T) {
	r := newTestRoot(t, map[string]string{"a.txt": "a\n", "b.txt": "b\n"})
	c := NewChangeSet(r)
	for _, err := range []error{
		c.WriteFile("a.txt", []byte("A\n")),
		c.WriteFile("b.txt", []byte("B\n")),
		c.WriteFile("c.txt", []byte("C\n")),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	// Someone edits b and creates c behind the change set's back.
	writeTree(t, r.Dir(), map[string]string{"b.txt": "edited\n", "c.txt": "also new\n"})
	conf, err := c.Conflicts()
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(conf, []string{"b.txt", "c.txt"}); diff != "" {
		t.Errorf("Conflicts (-got +want):\n%s", diff)
	}
	err = c.Apply()
	var ce *ConflictError
	if !errors.As(err, &ce) || !errors.Is(err, ErrConflict) {
		t.Fatalf("Apply error %v, want *ConflictError", err)
	}
	if diff := cmp.Diff(ce.Files, []string{"b.txt", "c.txt"}); diff != "" {
		t.Errorf("ConflictError.Files (-got +want):\n%s", diff)
	}
	if got, _ := readDisk(t, r, "a.txt"); got != "a\n" {
		t.Errorf("a.txt written despite the conflict: %q", got)
	}
	if c.Len() != 3 {
		t.Errorf("refused Apply dropped changes: %d left", c.Len())
	}
}

// TestApplyRollback makes the last write fail (its parent path is a file)
// and checks the files already written are restored.
func TestApplyRollback(t *testing.T) {
	r := newTestRoot(t, map[string]string{"a.txt": "a\n", "b.txt": "b\n"})
	c := NewChangeSet(r)
	for _, err := range []error{
		c.WriteFile("a.txt", []byte("A\n")),
		c.WriteFile("b.txt", []byte("B\n")),
		c.WriteFile("new.txt", []byte("new\n")),
		c.WriteFile("made/by/apply.txt", []byte("m\n")),
		c.WriteFile("z/under.txt", []byte("z\n")),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	// "z" appears as a file: z/under.txt cannot be written, but its base
	// (absent) still matches, so Apply gets past the conflict check.
	writeTree(t, r.Dir(), map[string]string{"z": "blocker"})
	err := c.Apply()
	if err == nil {
		t.Fatal("Apply succeeded")
	}
	if strings.Contains(err.Error(), "roll back") {
		t.Errorf("rollback reported a failure: %v", err)
	}
	if _, err := os.Stat(filepath.Join(r.Dir(), "made")); err == nil {
		t.Error("directory created by the failed Apply is left behind")
	}
	for rel, want := range map[string]string{"a.txt": "a\n", "b.txt": "b\n", "new.txt": "<none>", "z": "blocker"} {
		got, ok := readDisk(t, r, rel)
		if !ok {
			got = "<none>"
		}
		if got != want {
			t.Errorf("after rollback %s = %q, want %q", rel, got, want)
		}
	}
	if c.Len() != 5 {
		t.Errorf("failed Apply dropped changes: %d left", c.Len())
	}
}

// A change is recorded at its resolved path, which is what the policy
// judged. When a symlink appears on that path before Apply (docs/ turned
// into a link to .git/hooks), Apply refuses with a conflict and writes
// nothing through it; without the swap the same change applies (control).
func TestApplyRefusesPathRedirectedBySymlink(t *testing.T) {
	for _, swap := range []bool{true, false} {
		r := newTestRoot(t, map[string]string{"docs/x.md": "x\n", ".git/hooks/README": "hooks\n", "a.txt": "a\n"})
		c := NewChangeSet(r)
		if err := c.WriteFile("a.txt", []byte("A\n")); err != nil {
			t.Fatal(err)
		}
		if err := c.WriteFile("docs/pre-commit", []byte("#!/bin/sh\n")); err != nil {
			t.Fatal(err)
		}
		if swap {
			docs := filepath.Join(r.Dir(), "docs")
			if err := os.RemoveAll(docs); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(filepath.Join(".git", "hooks"), docs); err != nil {
				t.Fatal(err)
			}
		}
		err := c.Apply()
		_, hooked := readDisk(t, r, ".git/hooks/pre-commit")
		if swap {
			if !errors.Is(err, ErrConflict) || hooked {
				t.Errorf("after the swap: Apply = %v, .git/hooks/pre-commit written %v", err, hooked)
			}
			if a, _ := readDisk(t, r, "a.txt"); a != "a\n" {
				t.Errorf("a.txt = %q: a refused Apply must change nothing", a)
			}
			continue
		}
		if err != nil {
			t.Fatalf("control: %v", err)
		}
		if d, _ := readDisk(t, r, "docs/pre-commit"); d != "#!/bin/sh\n" || hooked {
			t.Errorf("control: docs/pre-commit %q, hook written %v", d, hooked)
		}
	}
}
