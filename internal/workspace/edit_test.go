package workspace

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const goSrc = "package p\n\nfunc f() {\n\tx := 1\n\ty := 2\n\treturn\n}\n"

// The ladder: each slip applies only when unique, and what is written
// keeps the file's tabs and line endings.
func TestEditLadder(t *testing.T) {
	tests := []struct {
		name, file, old, new string
		want                 string
		level                Level
		unnumbered           bool
	}{
		{"exact", goSrc, "\tx := 1\n", "\tx := 10\n", strings.Replace(goSrc, "x := 1", "x := 10", 1), Exact, false},
		{"spaces for tabs", goSrc, "    x := 1\n    y := 2\n", "    x := 1\n    y := 3\n", strings.Replace(goSrc, "y := 2", "y := 3", 1), Indentation, false},
		{"CRLF file", strings.ReplaceAll(goSrc, "\n", "\r\n"), "\tx := 1\n\ty := 2\n", "\tx := 1\n\tz := 0\n\ty := 2\n",
			strings.ReplaceAll(strings.Replace(goSrc, "\ty := 2", "\tz := 0\n\ty := 2", 1), "\n", "\r\n"), TrailingSpace, false},
		{"trailing space in old", goSrc, "\tx := 1 \n\ty := 2\n", "\tx := 5\n\ty := 2\n", strings.Replace(goSrc, "x := 1", "x := 5", 1), TrailingSpace, false},
		{"no common indentation", goSrc, "x := 1\ny := 2\n", "x := 1\nif x > 0 {\n\ty := 2\n}\n",
			strings.Replace(goSrc, "\ty := 2\n", "\tif x > 0 {\n\t\ty := 2\n\t}\n", 1), Indentation, false},
		{"copied line numbers", goSrc, "     4\tx := 1\n", "     4\tx := 7\n", strings.Replace(goSrc, "x := 1", "x := 7", 1), Exact, true},
		{"old without final newline", goSrc, "    x := 1\n    y := 2", "    y := 2", strings.Replace(goSrc, "\tx := 1\n", "", 1), Indentation, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, e, err := editText("f.go", []byte(tt.file), tt.old, tt.new, false)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(string(out), tt.want); diff != "" {
				t.Errorf("(-got +want):\n%s", diff)
			}
			if e.Level != tt.level || e.Unnumbered != tt.unnumbered || e.Count != 1 {
				t.Errorf("edited %+v, want level %v unnumbered %v", e, tt.level, tt.unnumbered)
			}
		})
	}
}

// A tolerant match that is not unique is refused with every place listed.
func TestEditLadderRefusesAmbiguity(t *testing.T) {
	file := "a\n\tx := 1\nb\n\tx := 1\n"
	_, _, err := editText("f.go", []byte(file), "    x := 1\n", "    x := 2\n", false)
	var me *MatchError
	if !errors.As(err, &me) || !errors.Is(err, ErrAmbiguous) {
		t.Fatalf("err %v, want ambiguous", err)
	}
	for _, want := range []string{"at lines 2, 4", "     1\ta", "     3\tb", "ignoring indentation"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
}

func TestEditErrorsCarryLines(t *testing.T) {
	file := "one\ntwo\nthree\ntwo\n"
	_, _, err := editText("a.txt", []byte(file), "two", "2", false)
	if err == nil || !strings.Contains(err.Error(), "old occurs 2 times, at lines 2, 4") || !strings.Contains(err.Error(), "     3\tthree") {
		t.Errorf("ambiguous: %v", err)
	}
	_, _, err = editText("f.go", []byte(goSrc), "\tx := 11\n\ty := 2\n", "z", false)
	if err == nil || !strings.Contains(err.Error(), "closest lines are 4–5") || !strings.Contains(err.Error(), "     4\t\tx := 1") {
		t.Errorf("not found: %v", err)
	}
	_, _, err = editText("f.go", []byte(goSrc), "zzzz qqqq\n", "z", false)
	if err == nil || !strings.Contains(err.Error(), "resembles old") {
		t.Errorf("nothing close: %v", err)
	}
	// A slip the ladder does not cover is named next to the closest lines.
	_, _, err = editText("f.go", []byte(goSrc), "    x := 1\n    y := 3\n", "z", false)
	if err == nil || !strings.Contains(err.Error(), "the file indents with tabs, old with spaces") {
		t.Errorf("tabs: %v", err)
	}
}

func TestEditSameTextRefused(t *testing.T) {
	c := NewChangeSet(newTestRoot(t, map[string]string{"a.txt": "x\n"}))
	if _, err := c.Edit("a.txt", "x", "x", false); err == nil || !strings.Contains(err.Error(), "nothing would change") {
		t.Errorf("old == new: %v", err)
	}
}

func TestApplyPatchTolerantAndV4A(t *testing.T) {
	tests := []struct {
		name, file, patch, want string
	}{
		{"context with spaces for tabs", goSrc,
			"--- a/f.go\n+++ b/f.go\n@@ -4,2 +4,2 @@\n     x := 1\n-    y := 2\n+    y := 3\n",
			strings.Replace(goSrc, "y := 2", "y := 3", 1)},
		{"CRLF file", strings.ReplaceAll(goSrc, "\n", "\r\n"),
			"--- a/f.go\n+++ b/f.go\n@@ -4,2 +4,2 @@\n \tx := 1\n-\ty := 2\n+\ty := 3\n",
			strings.ReplaceAll(strings.Replace(goSrc, "y := 2", "y := 3", 1), "\n", "\r\n")},
		{"V4A update with an anchor", goSrc,
			"*** Begin Patch\n*** Update File: f.go\n@@ func f() {\n \tx := 1\n-\ty := 2\n+\ty := 3\n*** End Patch\n",
			strings.Replace(goSrc, "y := 2", "y := 3", 1)},
		{"V4A end of file", goSrc,
			"*** Begin Patch\n*** Update File: f.go\n \treturn\n }\n+\n+func g() {}\n*** End of File\n*** End Patch",
			goSrc + "\nfunc g() {}\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := NewChangeSet(newTestRoot(t, map[string]string{"f.go": tt.file}))
			if _, err := c.ApplyPatch([]byte(tt.patch)); err != nil {
				t.Fatal(err)
			}
			got, _ := c.ReadFile("f.go")
			if diff := cmp.Diff(string(got), tt.want); diff != "" {
				t.Errorf("(-got +want):\n%s", diff)
			}
		})
	}
}

func TestApplyPatchV4AFiles(t *testing.T) {
	c := NewChangeSet(newTestRoot(t, map[string]string{"old.txt": "bye\n", "f.go": goSrc}))
	p := "*** Begin Patch\n*** Add File: new/n.txt\n+hello\n+world\n*** Delete File: old.txt\n*** End Patch\n"
	paths, err := c.ApplyPatch([]byte(p))
	if err != nil || strings.Join(paths, ",") != "new/n.txt,old.txt" {
		t.Fatalf("paths %v, %v", paths, err)
	}
	if got, _ := c.ReadFile("new/n.txt"); string(got) != "hello\nworld\n" {
		t.Errorf("added %q", got)
	}
	if _, err := c.ReadFile("old.txt"); err == nil {
		t.Error("old.txt not deleted")
	}
	for _, bad := range []string{
		"*** Begin Patch\n*** Update File: f.go\n*** Move to: g.go\n@@\n-x\n+y\n*** End Patch",
		"*** Begin Patch\n*** Update File: ../x\n@@\n-x\n+y\n*** End Patch",
		"*** Begin Patch\n*** Frobnicate: f.go\n*** End Patch",
		"*** Begin Patch\n*** Update File: f.go\n@@ func nowhere(\n-x\n+y\n*** End Patch",
	} {
		if _, err := c.ApplyPatch([]byte(bad)); err == nil {
			t.Errorf("%q applied", bad)
		}
	}
}

// A failing hunk names itself and shows its lines beside the file's.
func TestApplyPatchMismatchDetail(t *testing.T) {
	c := NewChangeSet(newTestRoot(t, map[string]string{"f.go": goSrc}))
	_, err := c.ApplyPatch([]byte("--- a/f.go\n+++ b/f.go\n@@ -4,2 +4,2 @@\n \tx := 100\n-\ty := 2\n+\ty := 3\n"))
	if !errors.Is(err, ErrHunkMismatch) {
		t.Fatalf("err %v", err)
	}
	msg := err.Error()
	for _, want := range []string{"patch f.go hunk 1: hunk does not match the file", "expected at line 4", "\tx := 100", "closest actual lines 4–5", "     4\t\tx := 1"} {
		if !strings.Contains(msg, want) {
			t.Errorf("%q lacks %q", msg, want)
		}
	}
	if strings.Count(msg, "apply patch") > 1 {
		t.Errorf("doubled prefix: %q", msg)
	}
	_, err = c.ApplyPatch([]byte("not a patch"))
	if err == nil || !strings.Contains(err.Error(), "*** Begin Patch") {
		t.Errorf("no diffs: %v", err)
	}
}

// FuzzEditText: any file, old and new: no panic; an exact unique old is
// replaced exactly; a refusal is a *MatchError or names the problem.
func FuzzEditText(f *testing.F) {
	f.Add(goSrc, "    x := 1\n", "    x := 2\n")
	f.Add("a\r\nb\r\n", "a\nb\n", "c\n")
	f.Add("\tx \n\tx\n", "x", "y")
	f.Add("     1\tq\n", "     1\tq", "z")
	f.Fuzz(func(t *testing.T, file, old, new string) {
		if old == "" {
			return
		}
		out, e, err := editText("f", []byte(file), old, new, false)
		if err != nil {
			return
		}
		if strings.Count(file, old) == 1 && string(out) != strings.Replace(file, old, new, 1) {
			t.Fatalf("exact edit of %q in %q: %q", old, file, out)
		}
		if e.Count != 1 || e.Line < 1 {
			t.Fatalf("edited %+v", e)
		}
	})
}
