package workspace

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestApplyPatch(t *testing.T) {
	base := map[string]string{
		"a.txt": "1\n2\n3\n4\n5\n6\n7\n8\n9\n",
		"b.txt": "alpha\nbeta\ngamma\n",
		"d.txt": "delete me\n",
	}
	tests := []struct {
		name    string
		patch   string
		want    map[string]string // expected pending content; "<none>" deleted
		wantErr error
	}{
		{
			name:  "several files, create and delete",
			patch: "--- a/a.txt\n+++ b/a.txt\n@@ -2,3 +2,3 @@\n 2\n-3\n+three\n 4\n--- /dev/null\n+++ b/new/c.txt\n@@ -0,0 +1,2 @@\n+c1\n+c2\n--- a/d.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-delete me\n",
			want:  map[string]string{"a.txt": "1\n2\nthree\n4\n5\n6\n7\n8\n9\n", "new/c.txt": "c1\nc2\n", "d.txt": "<none>"},
		},
		{
			name:  "shifted line numbers within fuzz",
			patch: "--- a/a.txt\n+++ b/a.txt\n@@ -1,3 +1,3 @@\n 6\n-7\n+seven\n 8\n",
			want:  map[string]string{"a.txt": "1\n2\n3\n4\n5\n6\nseven\n8\n9\n"},
		},
		{
			name:  "git headers and no prefix",
			patch: "diff --git a/b.txt b/b.txt\nindex 111..222 100644\n--- b.txt\n+++ b.txt\n@@ -1,3 +1,3 @@\n alpha\n-beta\n+BETA\n gamma\n",
			want:  map[string]string{"b.txt": "alpha\nBETA\ngamma\n"},
		},
		{
			name:  "insertion hunk",
			patch: "--- a/b.txt\n+++ b/b.txt\n@@ -1,0 +2 @@\n+inserted\n",
			want:  map[string]string{"b.txt": "alpha\ninserted\nbeta\ngamma\n"},
		},
		{
			name:    "context mismatch fails every file",
			patch:   "--- a/b.txt\n+++ b/b.txt\n@@ -1,2 +1,2 @@\n alpha\n-beta\n+BETA\n--- a/a.txt\n+++ b/a.txt\n@@ -1,2 +1,2 @@\n 1\n-nope\n+x\n",
			wantErr: ErrHunkMismatch,
		},
		{
			name:    "create over an existing file",
			patch:   "--- /dev/null\n+++ b/b.txt\n@@ -0,0 +1 @@\n+x\n",
			wantErr: errors.New("exists"),
		},
		{
			name:    "patch a missing file",
			patch:   "--- a/zz.txt\n+++ b/zz.txt\n@@ -1 +1 @@\n-a\n+b\n",
			wantErr: errors.New("does not exist"),
		},
		{
			name:    "escape",
			patch:   "--- a/../x\n+++ b/../x\n@@ -1 +1 @@\n-a\n+b\n",
			wantErr: ErrEscape,
		},
		{
			name:    "not a diff",
			patch:   "hello\n",
			wantErr: errors.New("no file diffs"),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newTestRoot(t, base)
			c := NewChangeSet(r)
			if err := c.WriteFile("b.txt", []byte("alpha\nbeta\ngamma\n")); err != nil {
				t.Fatal(err)
			}
			before := c.Fingerprint()
			_, err := c.ApplyPatch([]byte(tt.patch))
			if tt.wantErr != nil {
				if err == nil {
					t.Fatal("patch applied")
				}
				if !errors.Is(err, tt.wantErr) && !strings.Contains(err.Error(), tt.wantErr.Error()) {
					t.Fatalf("error %v, want %v", err, tt.wantErr)
				}
				if c.Fingerprint() != before {
					t.Error("a failed patch changed the change set")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for rel, want := range tt.want {
				got, err := c.ReadFile(rel)
				s := string(got)
				if err != nil {
					s = "<none>"
				}
				if diff := cmp.Diff(s, want); diff != "" {
					t.Errorf("%s (-got +want):\n%s", rel, diff)
				}
			}
		})
	}
}

// FuzzApplyPatch feeds arbitrary patches: ApplyPatch must never panic,
// never touch the disk, and either apply fully or leave the change set as
// it was.
func FuzzApplyPatch(f *testing.F) {
	for _, s := range []string{
		"--- a/a.txt\n+++ b/a.txt\n@@ -1,2 +1,2 @@\n one\n-two\n+2\n",
		"--- /dev/null\n+++ b/n.txt\n@@ -0,0 +1 @@\n+x\n\\ No newline at end of file\n",
		"--- a/a.txt\n+++ /dev/null\n@@ -1,3 +0,0 @@\n-one\n-two\n-three\n",
		"--- a/a.txt\n+++ b/a.txt\n@@ -5,1 +5,1 @@\n-x\n+y\n",
		"--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-one\n\\ No newline at end of file\n+uno\n",
		"diff --git a/a.txt b/a.txt\n--- a/a.txt\n+++ b/a.txt\n@@ -0,0 +1 @@\n+top\n",
		"--- a/../../etc/passwd\n+++ b/../../etc/passwd\n@@ -1 +1 @@\n-root\n+x\n",
		"@@ -1 +1 @@\n-a\n+b\n",
		"",
		"--- /dev/null\n+++ \"b/\\056git/config\"\n@@ -0,0 +1 @@\n+x\n",
		"diff --git \"a/x y\" \"b/x y\"\nnew file mode 100644\nindex 0000000..e69de29\n",
		"*** Begin Patch\n*** Update File: a.txt\n@@ one\n-two\n+2\n*** End Patch\n",
		"*** Begin Patch\n*** Add File: n.txt\n+x\n*** Delete File: a.txt\n*** End Patch",
		"*** Begin Patch\n*** Update File: a.txt\n one\n-    two\n+2\n*** End of File\n",
		"--- a/a.txt\n+++ b/a.txt\n@@ -2 +2 @@\n-  two  \n+2\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, patch string) {
		r := newTestRoot(t, map[string]string{"a.txt": "one\ntwo\nthree\n"})
		c := NewChangeSet(r)
		before := c.Fingerprint()
		paths, err := c.ApplyPatch([]byte(patch))
		if err != nil {
			if c.Fingerprint() != before {
				t.Fatalf("failed patch %q changed the change set", patch)
			}
		} else if len(paths) == 0 {
			t.Fatalf("patch %q applied to no file without error", patch)
		}
		if got, _ := readDisk(t, r, "a.txt"); got != "one\ntwo\nthree\n" {
			t.Fatalf("patch %q touched the disk", patch)
		}
		// Whatever applied renders to a diff that applies again on the base.
		if err == nil && c.Len() > 0 {
			c2 := NewChangeSet(r)
			if _, err := c2.ApplyPatch([]byte(c.Diff())); err != nil && !strings.Contains(c.Diff(), "new file mode") {
				t.Fatalf("re-applying our own diff: %v\n%s", err, c.Diff())
			}
		}
	})
}

// ParsePatch is the one decoding of patch names: each header spelling
// below comes out as the path that is written.
func TestParsePatchNames(t *testing.T) {
	for _, tt := range []struct {
		patch string
		want  []string // "op path"; nil: an error
	}{
		{"--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-a\n+b\n", []string{"modify a.txt"}},
		{"--- \"a/.git/config\"\n+++ \"b/.git/config\"\n@@ -1 +1 @@\n-a\n+b\n", []string{"modify .git/config"}},
		{"--- /dev/null\n+++ \"b/\\056github/workflows/x.yml\"\n@@ -0,0 +1 @@\n+x\n", []string{"create .github/workflows/x.yml"}},
		{"--- \"x/../docs/\\056\\056/.git/config\"\n+++ \"x/../docs/\\056\\056/.git/config\"\n@@ -1 +1 @@\n-a\n+b\n", []string{"modify .git/config"}},
		{"diff --git a/.git/index.lock b/.git/index.lock\nnew file mode 100644\nindex 0000000..e69de29\n", []string{"create .git/index.lock"}},
		{"diff --git \"a/\\056env\" \"b/\\056env\"\ndeleted file mode 100644\nindex e69de29..0000000\n", []string{"delete .env"}},
		{"--- a/d.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-x\n", []string{"delete d.txt"}},
		{"--- a/a.txt\t2024-01-01 00:00:00.000000000 +0000\n+++ b/a.txt\t2024-01-01 00:00:00.000000000 +0000\n@@ -1 +1 @@\n-a\n+b\n", []string{"modify a.txt"}},
		{"--- a/a.txt\n+++ b/b.txt\n@@ -1 +1 @@\n-a\n+b\n", nil},            // rename
		{"--- /dev/null\n+++ \"b/a\\tb\"\n@@ -0,0 +1 @@\n+x\n", nil},        // control character
		{"--- /dev/null\n+++ \"b/\\056\\056/x\"\n@@ -0,0 +1 @@\n+x\n", nil}, // escape
		{"--- /dev/null\n+++ /etc/passwd\n@@ -0,0 +1 @@\n+x\n", nil},        // absolute
		{"--- /dev/null\n+++ \"b/unterminated\n@@ -0,0 +1 @@\n+x\n", nil},   // bad quoting
		{"--- /dev/null\n+++ b/.\n@@ -0,0 +1 @@\n+x\n", nil},                // the root
	} {
		p, err := ParsePatch([]byte(tt.patch))
		if tt.want == nil {
			if err == nil {
				t.Errorf("ParsePatch(%q) = %+v, want an error", tt.patch, p.Files)
			}
			continue
		}
		if err != nil {
			t.Errorf("ParsePatch(%q): %v", tt.patch, err)
			continue
		}
		var got []string
		for _, f := range p.Files {
			got = append(got, string(f.Op)+" "+f.Path)
		}
		if diff := cmp.Diff(got, tt.want); diff != "" {
			t.Errorf("ParsePatch(%q) (-got +want):\n%s", tt.patch, diff)
		}
	}
}
