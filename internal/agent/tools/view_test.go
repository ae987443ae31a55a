package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ioh-lsp/ioh-lsp/internal/workspace"
)

// writeFiles writes files (slash paths) under dir.
func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for p, c := range files {
		abs := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(abs), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(abs, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// world writes files into a fresh workspace and returns its tool set.
func world(t *testing.T, files map[string]string) (map[string]Tool, *workspace.ChangeSet, string) {
	t.Helper()
	dir := t.TempDir()
	writeFiles(t, dir, files)
	root, err := workspace.NewRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	cs := workspace.NewChangeSet(root)
	return Set(Env{Changes: cs}, nil), cs, dir
}

func call(t *testing.T, set map[string]Tool, tool string, a any) Result {
	t.Helper()
	b, err := json.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	r, err := set[tool].Call(context.Background(), b)
	if err != nil {
		t.Fatalf("%s %s: %v", tool, b, err)
	}
	return r
}

func wantIn(t *testing.T, what, got string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(got, w) {
			t.Errorf("%s: %q lacks %q", what, got, w)
		}
	}
}

func TestReadFileWindow(t *testing.T) {
	var big strings.Builder
	for i := 1; i <= 4073; i++ {
		fmt.Fprintf(&big, "line %d\n", i)
	}
	wide := strings.Repeat("x", 300) + "\n" // 300-byte lines: the byte cap comes first
	set, _, _ := world(t, map[string]string{
		"big.txt": big.String(), "wide.txt": strings.Repeat(wide, 200),
		"min.js": strings.Repeat("a", 5000) + "\n", "bin.dat": "\x00\x01\x02", "empty.txt": "",
	})
	r := call(t, set, "read_file", map[string]any{"path": "big.txt"})
	wantIn(t, "default window", r.Content, "     1\tline 1\n", "   400\tline 400\n", "[lines 1–400 of 4,073; continue with offset=401]")
	if strings.Contains(r.Content, "line 401\n") {
		t.Error("the window went past 400 lines")
	}
	r = call(t, set, "read_file", map[string]any{"path": "big.txt", "offset": 4000})
	wantIn(t, "last window", r.Content, "  4073\tline 4073\n", "[lines 4000–4073 of 4,073; end of file]")
	r = call(t, set, "read_file", map[string]any{"path": "big.txt", "offset": 4074})
	if !r.IsError || !strings.Contains(r.Content, "the file has 4,073 lines (the last is offset=4073)") {
		t.Errorf("past the end: %+v", r)
	}
	r = call(t, set, "read_file", map[string]any{"path": "wide.txt"})
	if len(r.Content) > readBytes+200 || !strings.Contains(r.Content, "continue with offset=") {
		t.Errorf("byte cap: %d bytes, %q", len(r.Content), r.Content[len(r.Content)-80:])
	}
	if !strings.HasSuffix(strings.Split(r.Content, "\n[lines")[0], strings.Repeat("x", 300)) {
		t.Error("the window does not end at a line boundary")
	}
	r = call(t, set, "read_file", map[string]any{"path": "min.js"})
	wantIn(t, "long line", r.Content, "[line cut: 2,000 of 5,000 bytes shown")
	r = call(t, set, "read_file", map[string]any{"path": "bin.dat"})
	if r.IsError || r.Content != "bin.dat: binary file, 3 bytes (not shown)" {
		t.Errorf("binary: %+v", r)
	}
	r = call(t, set, "read_file", map[string]any{"path": "empty.txt"})
	wantIn(t, "empty", r.Content, "empty file")
}

func TestNumberLines(t *testing.T) {
	if got := NumberLines("a\r\nb\n"); got != "     1\ta\n     2\tb\n" {
		t.Errorf("NumberLines = %q", got)
	}
}

func TestReadWindow(t *testing.T) {
	var big strings.Builder
	for i := 1; i <= 4073; i++ {
		fmt.Fprintf(&big, "line %d\n", i)
	}
	for _, tt := range []struct {
		content            string
		first, last, total int
		ok                 bool
	}{
		{NumberLines("a\nb\nc\n"), 1, 3, 3, true},
		{NumberLines("[lines 1–9 of 9; end of file]\n"), 1, 1, 1, true}, // a file's own text is no footer
		{"   400\tx\n[lines 1–400 of 4,073; continue with offset=401]\n", 1, 400, 4073, true},
		{"  4073\tx\n[lines 4,000–4,073 of 4,073; end of file]\n", 4000, 4073, 4073, true},
		{"read a.txt: offset 9 is past the end", 0, 0, 0, false},
		{"x.png: binary file, 3 bytes (not shown)", 0, 0, 0, false},
	} {
		f, l, n, ok := ReadWindow(tt.content)
		if f != tt.first || l != tt.last || n != tt.total || ok != tt.ok {
			t.Errorf("ReadWindow(%.40q) = %d, %d, %d, %v; want %d, %d, %d, %v", tt.content, f, l, n, ok, tt.first, tt.last, tt.total, tt.ok)
		}
	}
	// A real window agrees.
	set, _, _ := world(t, map[string]string{"big.txt": big.String()})
	r := call(t, set, "read_file", map[string]any{"path": "big.txt", "offset": 401})
	if f, l, n, ok := ReadWindow(r.Content); f != 401 || l != 800 || n != 4073 || !ok {
		t.Errorf("ReadWindow of a read = %d, %d, %d, %v", f, l, n, ok)
	}
}

func TestGrepSaysWhenItStops(t *testing.T) {
	var many strings.Builder
	for i := range 248 {
		fmt.Fprintf(&many, "hit %d\n", i)
	}
	minified := strings.Repeat("var a=1;", 8000) + "NEEDLE" + strings.Repeat(";b=2", 8000) + "\n"
	set, _, _ := world(t, map[string]string{"many.txt": many.String(), "m.js": minified, "other.txt": "hit\n"})
	r := call(t, set, "grep", map[string]any{"pattern": "hit"})
	wantIn(t, "cap", r.Content, "[showing 200 of 249 matches; narrow with glob")
	r = call(t, set, "grep", map[string]any{"pattern": "hit", "files": true})
	wantIn(t, "files", r.Content, "many.txt: 248\n", "other.txt: 1\n", "[249 matches in 2 files]")
	r = call(t, set, "grep", map[string]any{"pattern": "NEEDLE", "literal": true})
	if len(r.Content) > 600 || !strings.Contains(r.Content, "NEEDLE") || !strings.Contains(r.Content, "bytes]") {
		t.Errorf("minified line: %d bytes %q", len(r.Content), r.Content)
	}
	r = call(t, set, "grep", map[string]any{"pattern": "zzz", "glob": "*.go"})
	wantIn(t, "none", r.Content, "(no matches in files matching *.go)")
}

func TestFindAndPathsExplain(t *testing.T) {
	set, _, dir := world(t, map[string]string{"stats/stats.go": "package stats\n", "x/y.go": "package x\n", "README": "r\n"})
	r := call(t, set, "find", map[string]any{"glob": "*.go"})
	wantIn(t, "find", r.Content, "no file matches *.go at the root; **/*.go matches 2, e.g. stats/stats.go, x/y.go")
	r = call(t, set, "read_file", map[string]any{"path": "stats.go"})
	if !r.IsError {
		t.Fatal("a missing file read")
	}
	wantIn(t, "did you mean", r.Content, "did you mean stats/stats.go?")
	r = call(t, set, "edit_file", map[string]any{"path": "stat/stats.go", "old": "a", "new": "b"})
	wantIn(t, "edit did you mean", r.Content, "did you mean stats/stats.go?")
	for tool, a := range map[string]map[string]any{
		"read_file": {"path": "stats"}, "edit_file": {"path": "stats", "old": "a", "new": "b"}, "delete_file": {"path": "stats"},
	} {
		r = call(t, set, tool, a)
		if !r.IsError || r.Content != "stats is a directory, not a file; list_dir shows what it holds" {
			t.Errorf("%s of a directory: %+v", tool, r)
		}
	}
	for _, d := range []string{"README", "nope"} {
		r = call(t, set, "list_dir", map[string]any{"path": d})
		if !r.IsError || strings.Contains(r.Content, dir) || strings.Count(r.Content, "list ") > 1 {
			t.Errorf("list_dir %s: %+v", d, r)
		}
	}
}

func TestEditReportsSyntax(t *testing.T) {
	src := "package p\n\nfunc f() {\n\treturn\n}\n"
	set, _, _ := world(t, map[string]string{"p.go": src, "c.json": "{\"a\": 1}\n", "bad.go": "package p\nfunc {\n"})
	r := call(t, set, "edit_file", map[string]any{"path": "p.go", "old": "func f() {\n", "new": "func f()\n"})
	if r.IsError {
		t.Fatalf("a syntax error blocked the edit: %s", r.Content)
	}
	wantIn(t, "go", r.Content, "syntax (go/parser): this write leaves 1 new error(s) in p.go", "p.go:4:2: expected declaration")
	r = call(t, set, "edit_file", map[string]any{"path": "c.json", "old": "1}", "new": "1,}"})
	wantIn(t, "json", r.Content, "syntax (encoding/json)", "c.json:1:")
	// An error the file already had is not reported again.
	r = call(t, set, "edit_file", map[string]any{"path": "bad.go", "old": "package p\n", "new": "package q\n"})
	if strings.Contains(r.Content, "syntax") {
		t.Errorf("an old error reported: %s", r.Content)
	}
	r = call(t, set, "write_file", map[string]any{"path": "n.go", "content": "package n\nfunc g( {\n"})
	wantIn(t, "write", r.Content, "syntax (go/parser)", "n.go:2:")
}

func TestApplyPatchTool(t *testing.T) {
	src := "package p\n\nfunc f() {\n\tx := 2\n}\n"
	set, cs, _ := world(t, map[string]string{"p.go": strings.Replace(src, "x := 2", "x := 1", 1)})
	r := call(t, set, "apply_patch", map[string]any{"patch": "*** Begin Patch\n*** Update File: p.go\n@@ func f() {\n-\tx := 1\n+\tx := 2\n*** End Patch\n"})
	if r.IsError || r.Content != "patched p.go" {
		t.Fatalf("V4A: %+v", r)
	}
	r = call(t, set, "apply_patch", map[string]any{"patch": "--- a/p.go\n+++ b/p.go\n@@ -4 +4 @@\n-\ty := 9\n+\ty := 3\n"})
	if !r.IsError || strings.Count(r.Content, "apply patch") > 0 || !strings.Contains(r.Content, "patch p.go hunk 1: hunk does not match the file") ||
		!strings.Contains(r.Content, "closest actual lines 4–4:\n     4\t\tx := 2") {
		t.Errorf("mismatch: %+v", r)
	}
	r = call(t, set, "apply_patch", map[string]any{"patch": "--- a/p.go\n+++ b/p.go\n@@ -4 +4 @@\n-\tx := 2\n+\tx := 2 {\n"})
	wantIn(t, "syntax", r.Content, "patched p.go", "syntax (go/parser)")
	r = call(t, set, "apply_patch", map[string]any{"patch": "--- a/p.go\n+++ b/p.go\n@@ -4 +4 @@\n-    x := 2 {\n+    x := 2\n"})
	wantIn(t, "tolerant", r.Content, "patched p.go (matched p.go hunk 1 at line 4 ignoring indentation and trailing whitespace; the files' own whitespace")
	if got, _ := cs.ReadFile("p.go"); string(got) != src {
		t.Errorf("after the tolerant hunk: %q", got)
	}
	r = call(t, set, "delete_file", map[string]any{"path": "sub/p.go"})
	wantIn(t, "delete", r.Content, "did you mean p.go?")
	r = call(t, set, "apply_patch", map[string]any{"patch": "--- a/sub/p.go\n+++ b/sub/p.go\n@@ -1 +1 @@\n-a\n+b\n"})
	wantIn(t, "missing", r.Content, "file to patch does not exist; did you mean p.go?")
}
