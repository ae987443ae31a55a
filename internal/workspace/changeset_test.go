package workspace

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestChangeSetOps(t *testing.T) {
	r := newTestRoot(t, map[string]string{"a.txt": "one two two\n", "dir/b.txt": "bee\n", "c.txt": "sea\n"})
	c := NewChangeSet(r)
	mustRead := func(rel string) string {
		t.Helper()
		b, err := c.ReadFile(rel)
		if err != nil {
			t.Fatalf("read %s: %v", rel, err)
		}
		return string(b)
	}

	// Edit: exactly once, ambiguity and absence are typed errors.
	if _, err := c.Edit("a.txt", "two", "2", false); !errors.Is(err, ErrAmbiguous) {
		t.Fatalf("ambiguous edit: %v", err)
	} else {
		var me *MatchError
		if !errors.As(err, &me) || me.Count != 2 || me.Path != "a.txt" {
			t.Errorf("MatchError = %+v", me)
		}
	}
	if _, err := c.Edit("a.txt", "three", "3", false); !errors.Is(err, ErrNoMatch) {
		t.Fatalf("missing edit: %v", err)
	}
	if e, err := c.Edit("a.txt", "two", "2", true); err != nil || e.Count != 2 {
		t.Fatalf("replace all = %+v, %v", e, err)
	}
	if e, err := c.Edit("a.txt", "one", "1", false); err != nil || e.Count != 1 {
		t.Fatalf("edit once = %+v, %v", e, err)
	}
	if got := mustRead("a.txt"); got != "1 2 2\n" {
		t.Errorf("after edits: %q", got)
	}
	// Writes, deletes and renames.
	if err := c.WriteFile("new/deep/n.txt", []byte("new\n")); err != nil {
		t.Fatal(err)
	}
	if err := c.Delete("c.txt"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.ReadFile("c.txt"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("read of deleted file: %v", err)
	}
	if err := c.Delete("c.txt"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("second delete: %v", err)
	}
	if err := c.Rename("dir/b.txt", "dir/renamed.txt"); err != nil {
		t.Fatal(err)
	}
	if err := c.Rename("a.txt", "new/deep/n.txt"); !errors.Is(err, fs.ErrExist) {
		t.Errorf("rename onto an existing file: %v", err)
	}
	if got := mustRead("dir/renamed.txt"); got != "bee\n" {
		t.Errorf("renamed content %q", got)
	}
	// Nothing reached the disk.
	for rel, want := range map[string]string{"a.txt": "one two two\n", "c.txt": "sea\n", "dir/b.txt": "bee\n"} {
		if got, _ := readDisk(t, r, rel); got != want {
			t.Errorf("disk %s = %q before Apply", rel, got)
		}
	}
	type row struct {
		Path, Op, From, Content string
		HasBase                 bool
	}
	var got []row
	for _, ch := range c.Changes() {
		got = append(got, row{ch.Path, string(ch.Op), ch.From, string(ch.Content), ch.BaseHash != ""})
	}
	want := []row{
		{"a.txt", "modify", "", "1 2 2\n", true},
		{"c.txt", "delete", "", "", true},
		{"dir/b.txt", "delete", "", "", true},
		{"dir/renamed.txt", "create", "dir/b.txt", "bee\n", false},
		{"new/deep/n.txt", "create", "", "new\n", false},
	}
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("changes (-got +want):\n%s", diff)
	}
	if base, ok := c.Base("a.txt"); !ok || string(base) != "one two two\n" {
		t.Errorf("Base(a.txt) = %q, %v", base, ok)
	}
	// Listing, grep and find see the pending state.
	entries, err := c.ListDir(".")
	if err != nil {
		t.Fatal(err)
	}
	wantEntries := []DirEntry{{Name: "a.txt", Size: 6}, {Name: "dir", IsDir: true}, {Name: "new", IsDir: true}}
	if diff := cmp.Diff(entries, wantEntries); diff != "" {
		t.Errorf("ListDir (-got +want):\n%s", diff)
	}
	if entries, err := c.ListDir("new/deep"); err != nil || len(entries) != 1 || entries[0].Name != "n.txt" {
		t.Errorf("ListDir(new/deep) = %v, %v", entries, err)
	}
	if _, err := c.ListDir("nowhere"); err == nil {
		t.Error("ListDir of a missing dir succeeded")
	}
	ms, err := c.Grep(context.Background(), GrepOptions{Pattern: "bee|sea|new|2"})
	if err != nil {
		t.Fatal(err)
	}
	wantMs := []Match{{"a.txt", 1, "1 2 2"}, {"dir/renamed.txt", 1, "bee"}, {"new/deep/n.txt", 1, "new"}}
	if diff := cmp.Diff(ms, wantMs); diff != "" {
		t.Errorf("Grep (-got +want):\n%s", diff)
	}
	ms, err = c.Grep(context.Background(), GrepOptions{Pattern: "new", Dir: "new/deep"})
	if err != nil {
		t.Fatalf("grep in a directory only the change set has: %v", err)
	}
	if diff := cmp.Diff(ms, wantMs[2:]); diff != "" {
		t.Errorf("Grep in new dir (-got +want):\n%s", diff)
	}
	if _, err := c.Grep(context.Background(), GrepOptions{Pattern: "x", Dir: "nowhere"}); err == nil {
		t.Error("grep in a missing directory succeeded")
	}
	found, err := c.Find(context.Background(), "**/*.txt")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(found, []string{"a.txt", "dir/renamed.txt", "new/deep/n.txt"}); diff != "" {
		t.Errorf("Find (-got +want):\n%s", diff)
	}
	// Writing a file back to its base drops the change; deleting a created
	// file drops it too.
	if err := c.WriteFile("a.txt", []byte("one two two\n")); err != nil {
		t.Fatal(err)
	}
	if err := c.Delete("new/deep/n.txt"); err != nil {
		t.Fatal(err)
	}
	if c.Len() != 3 {
		t.Errorf("Len = %d after reverting two changes, want 3", c.Len())
	}
}

func TestChangeSetRefusals(t *testing.T) {
	outside := t.TempDir()
	r := newTestRoot(t, map[string]string{"a.txt": "a", "d/x": ""})
	if err := os.Symlink(outside, filepath.Join(r.Dir(), "out")); err != nil {
		t.Fatal(err)
	}
	c := NewChangeSet(r)
	tests := []struct {
		name string
		err  error
		want error
	}{
		{"write absolute", c.WriteFile("/etc/x", nil), ErrAbsolute},
		{"write escape", c.WriteFile("../x", nil), ErrEscape},
		{"write through symlink", c.WriteFile("out/x", nil), ErrSymlinkEscape},
		{"write a directory", c.WriteFile("d", nil), ErrIsDir},
		{"delete missing", c.Delete("missing"), fs.ErrNotExist},
		{"rename missing", c.Rename("missing", "b"), fs.ErrNotExist},
		{"rename out", c.Rename("a.txt", "out/a.txt"), ErrSymlinkEscape},
	}
	for _, tt := range tests {
		if !errors.Is(tt.err, tt.want) {
			t.Errorf("%s: error %v, want %v", tt.name, tt.err, tt.want)
		}
	}
	if _, err := c.Edit("a.txt", "", "x", false); err == nil {
		t.Error("edit with empty old text succeeded")
	}
	if c.Len() != 0 {
		t.Errorf("refused operations left %d changes", c.Len())
	}
	if _, err := os.Stat(filepath.Join(outside, "x")); err == nil {
		t.Error("a write escaped the workspace")
	}
}

func TestChangeSetReadsRecordBase(t *testing.T) {
	r := newTestRoot(t, map[string]string{"a.txt": "a"})
	c := NewChangeSet(r)
	if _, err := c.ReadFile("a.txt"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.ReadFile("missing.txt"); err == nil {
		t.Fatal("read of a missing file succeeded")
	}
	want := map[string]string{"a.txt": hashOf([]byte("a")), "missing.txt": ""}
	if diff := cmp.Diff(c.BaseHashes(), want); diff != "" {
		t.Errorf("(-got +want):\n%s", diff)
	}
	if c.Len() != 0 {
		t.Errorf("reads made %d changes", c.Len())
	}
}
