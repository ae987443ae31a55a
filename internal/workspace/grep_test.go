package workspace

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp/syntax"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestLiteralOf(t *testing.T) {
	tests := []struct {
		pattern   string
		fold      bool // -i
		wantLit   string
		wantFold  bool
		wantExact bool
	}{
		{pattern: "hello", wantLit: "hello", wantExact: true},
		{pattern: `func \w+Parser`, wantLit: "Parser"},
		{pattern: `func \w+Parse\w*\(`, wantLit: "Parse"}, // as long as "func ", but rarer
		{pattern: `return \w+, Q`, wantLit: "return "},
		{pattern: `(foo)+bar`, wantLit: "bar"},
		{pattern: `a|b`},
		{pattern: `x*`},
		{pattern: `\d{2,}ab`, wantLit: "ab"},
		{pattern: `(?:abc){2}`, wantLit: "abc"},
		{pattern: "ParseDuration", fold: true, wantLit: "eduration", wantFold: true}, // 's' folds to U+017F
		{pattern: "Parameter", fold: true, wantLit: "parameter", wantFold: true, wantExact: true},
		{pattern: "Ask", fold: true, wantLit: "a", wantFold: true}, // 's' and 'k' fold to non-ASCII runes
		{pattern: "grep_tool", fold: true, wantLit: "grep_tool", wantFold: true, wantExact: true},
		{pattern: "ünïcode", wantLit: "ünïcode", wantExact: true},
		{pattern: "a\nb", wantLit: "", wantExact: false},
	}
	for _, tt := range tests {
		t.Run(tt.pattern, func(t *testing.T) {
			flags := syntax.Perl
			if tt.fold {
				flags |= syntax.FoldCase
			}
			re, err := syntax.Parse(tt.pattern, flags)
			if err != nil {
				t.Fatal(err)
			}
			p, exact := newPrefilter(re.Simplify())
			var lit string
			var fold bool
			if p != nil {
				lit, fold = string(p.lit), p.fold
			}
			got := fmt.Sprintf("%q fold=%v exact=%v", lit, fold, exact)
			want := fmt.Sprintf("%q fold=%v exact=%v", tt.wantLit, tt.wantFold, tt.wantExact)
			if diff := cmp.Diff(got, want); diff != "" {
				t.Errorf("(-got +want):\n%s", diff)
			}
		})
	}
}

func TestFoldIndex(t *testing.T) {
	re, _ := syntax.Parse("needle", syntax.Perl|syntax.FoldCase)
	p, _ := newPrefilter(re)
	tests := []struct {
		text string
		from int
		want int
	}{
		{"NEEDLE", 0, 0},
		{"xx nEeDlE yy", 0, 3},
		{"needl", 0, -1},
		{"eeeeeneedle", 0, 5},
		{"needle needle", 1, 7},
		{"", 0, -1},
	}
	for _, tt := range tests {
		st := newFoldState()
		if got := p.index([]byte(tt.text), tt.from, &st); got != tt.want {
			t.Errorf("index(%q, %d) = %d, want %d", tt.text, tt.from, got, tt.want)
		}
	}
}

func TestLiteralIndex(t *testing.T) {
	re, _ := syntax.Parse("err != nil", syntax.Perl)
	p, exact := newPrefilter(re)
	if !exact || p.lit[p.anchor] != '!' {
		t.Fatalf("prefilter %+v exact=%v: want the rare '!' as anchor", p, exact)
	}
	tests := []struct {
		text string
		from int
		want int
	}{
		{"if err != nil {", 0, 3},
		{"! err != nil", 0, 2},
		{"err != nil err != nil", 1, 11},
		{"err != nilerr !=", 10, -1},
		{"ERR != NIL", 0, -1},
		{"!", 0, -1},
	}
	for _, tt := range tests {
		st := newFoldState()
		if got := p.index([]byte(tt.text), tt.from, &st); got != tt.want {
			t.Errorf("index(%q, %d) = %d, want %d", tt.text, tt.from, got, tt.want)
		}
	}
}

func grepFixture(t *testing.T) *Root {
	return newTestRoot(t, map[string]string{
		".git/HEAD":      "",
		".gitignore":     "vendor/\n",
		"a.go":           "package a\n\nfunc Parse() {}\nfunc parse() {}\n// PARSE all\n",
		"b/b.go":         "package b\nvar x = Parse()\n",
		"b/b_test.go":    "package b\nfunc TestParse() {}\n",
		"c.txt":          "no newline at end: Parse",
		"vendor/v.go":    "func Parse() {}\n",
		"bin.dat":        "Parse\x00binary",
		"-x":             "dash -x file\n",
		"crlf.txt":       "Parse\r\nnext\r\n",
		"unicode.txt":    "Straße\nKelvin \u212a\n",
		"empty.txt":      "",
		"dir/deep/z.go":  "z Parse z Parse\n",
		"lines.txt":      "1\n2\n3\nparse 4\n5\nparse 6\n",
		"anchors.txt":    "start here\nnot start\n",
		"nomatchfile.md": "nothing\n",
	})
}

func TestGrep(t *testing.T) {
	r := grepFixture(t)
	line := func(m Match) string { return fmt.Sprintf("%s:%d:%s", m.Path, m.Line, m.Text) }
	tests := []struct {
		name string
		o    GrepOptions
		want []string
	}{
		{name: "literal regex", o: GrepOptions{Pattern: "Parse"}, want: []string{
			"a.go:3:func Parse() {}", "b/b.go:2:var x = Parse()", "b/b_test.go:2:func TestParse() {}",
			"c.txt:1:no newline at end: Parse", "crlf.txt:1:Parse\r", "dir/deep/z.go:1:z Parse z Parse"}},
		{name: "regex", o: GrepOptions{Pattern: `^func [A-Z]\w*\(`}, want: []string{"a.go:3:func Parse() {}", "b/b_test.go:2:func TestParse() {}"}},
		{name: "ignore case", o: GrepOptions{Pattern: "parse", IgnoreCase: true, Globs: []string{"*.go"}}, want: []string{
			"a.go:3:func Parse() {}", "a.go:4:func parse() {}", "a.go:5:// PARSE all",
			"b/b.go:2:var x = Parse()", "b/b_test.go:2:func TestParse() {}", "dir/deep/z.go:1:z Parse z Parse"}},
		{name: "fixed string", o: GrepOptions{Pattern: "Parse()", Literal: true}, want: []string{
			"a.go:3:func Parse() {}", "b/b.go:2:var x = Parse()", "b/b_test.go:2:func TestParse() {}"}},
		{name: "dash pattern", o: GrepOptions{Pattern: "-x", Literal: true}, want: []string{"-x:1:dash -x file"}},
		{name: "exclude glob", o: GrepOptions{Pattern: "Parse", Globs: []string{"*.go", "!*_test.go"}}, want: []string{
			"a.go:3:func Parse() {}", "b/b.go:2:var x = Parse()", "dir/deep/z.go:1:z Parse z Parse"}},
		{name: "anchored glob", o: GrepOptions{Pattern: "Parse", Globs: []string{"b/*.go"}}, want: []string{
			"b/b.go:2:var x = Parse()", "b/b_test.go:2:func TestParse() {}"}},
		{name: "dir excluded by glob", o: GrepOptions{Pattern: "Parse", Globs: []string{"!dir"}}, want: []string{
			"a.go:3:func Parse() {}", "b/b.go:2:var x = Parse()", "b/b_test.go:2:func TestParse() {}",
			"c.txt:1:no newline at end: Parse", "crlf.txt:1:Parse\r"}},
		{name: "sub dir", o: GrepOptions{Pattern: "Parse", Dir: "b"}, want: []string{
			"b/b.go:2:var x = Parse()", "b/b_test.go:2:func TestParse() {}"}},
		{name: "max", o: GrepOptions{Pattern: "Parse", Max: 2}, want: []string{
			"a.go:3:func Parse() {}", "b/b.go:2:var x = Parse()"}},
		{name: "line numbers", o: GrepOptions{Pattern: "parse"}, want: []string{"a.go:4:func parse() {}", "lines.txt:4:parse 4", "lines.txt:6:parse 6"}},
		{name: "line anchors", o: GrepOptions{Pattern: "^start|here$"}, want: []string{"anchors.txt:1:start here"}},
		{name: "unicode fold", o: GrepOptions{Pattern: "kelvin k", IgnoreCase: true}, want: []string{"unicode.txt:2:Kelvin \u212a"}},
		{name: "no literal", o: GrepOptions{Pattern: `[a-z]+ \d`}, want: []string{"lines.txt:4:parse 4", "lines.txt:6:parse 6"}},
		{name: "class only", o: GrepOptions{Pattern: `^[0-9]$`, Dir: "lines.txt"}, want: []string{
			"lines.txt:1:1", "lines.txt:2:2", "lines.txt:3:3", "lines.txt:5:5"}},
		{name: "nothing", o: GrepOptions{Pattern: "zzzz"}, want: nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ms, err := r.Grep(context.Background(), tt.o)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, m := range ms {
				got = append(got, line(m))
			}
			if diff := cmp.Diff(got, tt.want); diff != "" {
				t.Errorf("(-got +want):\n%s", diff)
			}
		})
	}
}

func TestGrepErrors(t *testing.T) {
	r := grepFixture(t)
	for _, o := range []GrepOptions{
		{Pattern: "("},
		{Pattern: "x", Max: -1},
		{Pattern: "x", Dir: "../up"},
		{Pattern: "x", Dir: "missing"},
		{Pattern: "x", Globs: []string{"["}},
	} {
		if _, err := r.Grep(context.Background(), o); err == nil {
			t.Errorf("Grep(%+v) succeeded", o)
		}
	}
}

func TestGrepSeesDocuments(t *testing.T) {
	r := grepFixture(t)
	r.SetDocument("a.go", []byte("package a\nfunc Unsaved() {}\n"))
	r.SetDocument("new/n.go", []byte("Unsaved too\n"))
	r.SetDocument("vendor/u.go", []byte("Unsaved but ignored\n"))
	ms, err := r.Grep(context.Background(), GrepOptions{Pattern: "Unsaved"})
	if err != nil {
		t.Fatal(err)
	}
	want := []Match{{Path: "a.go", Line: 2, Text: "func Unsaved() {}"}, {Path: "new/n.go", Line: 1, Text: "Unsaved too"}}
	if diff := cmp.Diff(ms, want); diff != "" {
		t.Errorf("(-got +want):\n%s", diff)
	}
}

func TestFind(t *testing.T) {
	r := grepFixture(t)
	tests := []struct {
		glob    string
		want    []string
		wantErr bool
	}{
		{glob: "**/*.go", want: []string{"a.go", "b/b.go", "b/b_test.go", "dir/deep/z.go"}},
		{glob: "*.go", want: []string{"a.go"}},
		{glob: "b/**", want: []string{"b/b.go", "b/b_test.go"}},
		{glob: "**/*_test.go", want: []string{"b/b_test.go"}},
		{glob: "**/*.{txt,md}", want: []string{"anchors.txt", "c.txt", "crlf.txt", "empty.txt", "lines.txt", "nomatchfile.md", "unicode.txt"}},
		{glob: "vendor/**"},
		{glob: "[", wantErr: true},
		{glob: "", wantErr: true},
		{glob: "../**", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.glob, func(t *testing.T) {
			got, err := r.Find(context.Background(), tt.glob)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tt.wantErr)
			}
			if diff := cmp.Diff(got, tt.want); diff != "" {
				t.Errorf("(-got +want):\n%s", diff)
			}
		})
	}
}

// TestAgainstRipgrep compares grep and find with ripgrep on the Go source
// tree: the same path:line sets and the same file lists.
func TestAgainstRipgrep(t *testing.T) {
	rg, err := exec.LookPath("rg")
	if err != nil {
		t.Skip("ripgrep (rg) is not installed")
	}
	if testing.Short() {
		t.Skip("reads the whole Go source tree")
	}
	src := filepath.Join(goroot(t), "src")
	if _, err := os.Stat(src); err != nil {
		t.Skipf("no Go source tree: %v", err)
	}
	r, err := NewRoot(src)
	if err != nil {
		t.Fatal(err)
	}
	run := func(args ...string) []string {
		cmd := exec.Command(rg, append([]string{"--hidden", "--no-config"}, args...)...)
		cmd.Dir = src
		out, err := cmd.Output()
		if err != nil && cmd.ProcessState.ExitCode() != 1 {
			t.Fatalf("rg %v: %v", args, err)
		}
		lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
		if len(lines) == 1 && lines[0] == "" {
			lines = nil
		}
		slices.Sort(lines)
		return lines
	}
	for _, o := range []GrepOptions{
		{Pattern: "ErrUnexpectedEOF"},
		{Pattern: `func \w+Parse\w*\(`},
		{Pattern: "parseduration", IgnoreCase: true},
		{Pattern: "f.Close()", Literal: true},
		{Pattern: "^// Copyright 20(0|1)9"},
		{Pattern: "TODO", Globs: []string{"*.go", "!*_test.go"}},
	} {
		t.Run(o.Pattern, func(t *testing.T) {
			args := []string{"-n", "--no-heading"}
			if o.Literal {
				args = append(args, "-F")
			}
			if o.IgnoreCase {
				args = append(args, "-i")
			}
			for _, g := range o.Globs {
				args = append(args, "-g", g)
			}
			want := run(append(args, "-e", o.Pattern)...)
			ms, err := r.Grep(context.Background(), o)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, m := range ms {
				got = append(got, fmt.Sprintf("%s:%d:%s", m.Path, m.Line, m.Text))
			}
			slices.Sort(got)
			if len(want) == 0 {
				t.Fatal("ripgrep found nothing: the comparison would prove nothing")
			}
			if diff := cmp.Diff(got, want); diff != "" {
				t.Errorf("grep %q differs from rg (-got +want):\n%s", o.Pattern, diff)
			}
		})
	}
	for _, c := range []struct{ glob, rgGlob string }{
		{"**/*_test.go", "*_test.go"},
		{"**/testdata/**/*.txt", "**/testdata/**/*.txt"},
		{"**", "*"},
	} {
		t.Run("find "+c.glob, func(t *testing.T) {
			want := run("--files", "-g", c.rgGlob)
			got, err := r.Find(context.Background(), c.glob)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(got, want); diff != "" {
				t.Errorf("find %q differs from rg --files (-got +want):\n%s", c.glob, diff)
			}
		})
	}
}
