package workspace

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRevert: a change applied and then reverted from the snapshot taken
// before Apply (MarshalWithBases) puts every file back exactly; later
// edits that do not overlap the change are kept; overlapping ones, and a
// snapshot that kept only a base's hash, refuse with the file named.
func TestRevert(t *testing.T) {
	const orig = "line 1\nline 2\nline 3\nline 4\nline 5\n"
	tests := []struct {
		name      string
		withBases bool
		user      func(t *testing.T, dir string)
		want      string // a.txt after the revert; "" when a conflict
		conflict  string // "hunks" or a word of the reason
	}{
		{name: "untouched", withBases: true, user: func(*testing.T, string) {}, want: orig},
		{name: "a later edit elsewhere is kept", withBases: true, user: func(t *testing.T, dir string) {
			writeTestFile(t, dir, "a.txt", "line 1 (user)\nline 2\nline 3\nline 4\nLINE 5\n")
		}, want: "line 1 (user)\nline 2\nline 3\nline 4\nline 5\n"},
		{name: "a later edit of the changed line", withBases: true, user: func(t *testing.T, dir string) {
			writeTestFile(t, dir, "a.txt", "line 1\nline 2\nline 3\nline 4\nLINE FIVE\n")
		}, conflict: "hunks"},
		{name: "the created file edited since", withBases: true, user: func(t *testing.T, dir string) {
			writeTestFile(t, dir, "new.txt", "new, edited\n")
		}, conflict: "created"},
		{name: "a snapshot without bases", withBases: false, user: func(*testing.T, string) {}, conflict: "not recorded"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			writeTestFile(t, dir, "a.txt", orig)
			writeTestFile(t, dir, "gone.txt", "gone\n")
			r, err := NewRoot(dir)
			if err != nil {
				t.Fatal(err)
			}
			cs := NewChangeSet(r)
			if _, err := cs.Edit("a.txt", "line 5", "LINE 5", false); err != nil {
				t.Fatal(err)
			}
			if err := cs.WriteFile("new.txt", []byte("new\n")); err != nil {
				t.Fatal(err)
			}
			if err := cs.Delete("gone.txt"); err != nil {
				t.Fatal(err)
			}
			snap, err := cs.Marshal()
			if tt.withBases {
				snap, err = cs.MarshalWithBases(nil)
			}
			if err != nil {
				t.Fatal(err)
			}
			if err := cs.Apply(); err != nil {
				t.Fatal(err)
			}
			tt.user(t, dir)
			back, err := UnmarshalChangeSet(r, snap)
			if err != nil {
				t.Fatal(err)
			}
			rev, _, conflicts, err := back.Revert()
			if err != nil {
				t.Fatal(err)
			}
			if tt.conflict != "" {
				if rev != nil || len(conflicts) == 0 {
					t.Fatalf("want a conflict, got %v %+v", rev, conflicts)
				}
				c := conflicts[0]
				if tt.conflict == "hunks" {
					if d := c.Describe(); c.Path != "a.txt" || d != "a.txt: line 5" {
						t.Fatalf("conflict %q", d)
					}
				} else if !strings.Contains(c.Describe(), tt.conflict) {
					t.Fatalf("conflict %q, want %q", c.Describe(), tt.conflict)
				}
				return
			}
			if len(conflicts) != 0 {
				t.Fatalf("conflicts %+v", conflicts)
			}
			if err := rev.Apply(); err != nil {
				t.Fatal(err)
			}
			if b, _ := os.ReadFile(filepath.Join(dir, "a.txt")); string(b) != tt.want {
				t.Fatalf("a.txt = %q, want %q", b, tt.want)
			}
			if b, _ := os.ReadFile(filepath.Join(dir, "gone.txt")); string(b) != "gone\n" {
				t.Fatalf("gone.txt = %q, want it restored", b)
			}
			if _, err := os.Stat(filepath.Join(dir, "new.txt")); !os.IsNotExist(err) {
				t.Fatalf("new.txt still there: %v", err)
			}
		})
	}
}
