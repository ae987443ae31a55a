package workspace

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestRuleSetMatch(t *testing.T) {
	base := string(filepath.Separator) + "repo"
	tests := []struct {
		name    string
		ignore  string
		path    string // relative to base
		isDir   bool
		matched bool
		ignored bool
	}{
		{name: "basename anywhere", ignore: "*.log", path: "a/b/x.log", matched: true, ignored: true},
		{name: "no match", ignore: "*.log", path: "a/x.go"},
		{name: "comment", ignore: "# x.go\n", path: "x.go"},
		{name: "escaped hash", ignore: `\#x`, path: "#x", matched: true, ignored: true},
		{name: "negation wins when last", ignore: "*.log\n!keep.log", path: "keep.log", matched: true},
		{name: "last rule wins", ignore: "!keep.log\n*.log", path: "keep.log", matched: true, ignored: true},
		{name: "dir only skips files", ignore: "build/", path: "build"},
		{name: "dir only matches dirs", ignore: "build/", path: "x/build", isDir: true, matched: true, ignored: true},
		{name: "anchored leading slash", ignore: "/top.txt", path: "sub/top.txt"},
		{name: "anchored at base", ignore: "/top.txt", path: "top.txt", matched: true, ignored: true},
		{name: "middle slash anchors", ignore: "doc/*.md", path: "x/doc/a.md"},
		{name: "middle slash at base", ignore: "doc/*.md", path: "doc/a.md", matched: true, ignored: true},
		{name: "star stops at slash", ignore: "doc/*.md", path: "doc/x/a.md"},
		{name: "leading doublestar", ignore: "**/gen/*.go", path: "a/b/gen/x.go", matched: true, ignored: true},
		{name: "middle doublestar", ignore: "a/**/z", path: "a/b/c/z", matched: true, ignored: true},
		{name: "middle doublestar zero dirs", ignore: "a/**/z", path: "a/z", matched: true, ignored: true},
		{name: "trailing doublestar", ignore: "out/**", path: "out/a/b", matched: true, ignored: true},
		{name: "question mark", ignore: "?.txt", path: "a.txt", matched: true, ignored: true},
		{name: "class", ignore: "[ab].txt", path: "c.txt"},
		{name: "braces are literal", ignore: "{a,b}.txt", path: "a.txt"},
		{name: "trailing spaces trimmed", ignore: "x.txt   ", path: "x.txt", matched: true, ignored: true},
		{name: "crlf", ignore: "x.txt\r\n", path: "x.txt", matched: true, ignored: true},
		{name: "outside base", ignore: "*", path: "../other/x"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := parseIgnore(base, []byte(tt.ignore))
			if s == nil {
				if tt.matched {
					t.Fatal("no rules parsed")
				}
				return
			}
			abs := filepath.Join(base, filepath.FromSlash(tt.path))
			m, ig := s.match(abs, filepath.Base(abs), tt.isDir)
			if m != tt.matched || ig != tt.ignored {
				t.Errorf("match(%q) = %v, %v; want %v, %v", tt.path, m, ig, tt.matched, tt.ignored)
			}
		})
	}
}

// walkAll lists every file the walker visits under start.
func walkAll(t *testing.T, r *Root, start string) []string {
	t.Helper()
	var mu sync.Mutex
	var got []string
	err := r.walk(context.Background(), start, nil, func(f walkFile) {
		mu.Lock()
		got = append(got, f.rel)
		mu.Unlock()
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(got)
	return got
}

func TestWalkIgnoreRules(t *testing.T) {
	files := map[string]string{
		".git/HEAD":             "ref",
		".git/info/exclude":     "*.excluded\n",
		".gitignore":            "*.log\nbuild/\n/only-top.txt\n!important.log\n",
		".hidden":               "h",
		".config/settings.json": "{}",
		"a.go":                  "a",
		"x.log":                 "ignored",
		"important.log":         "kept by negation",
		"only-top.txt":          "ignored at top",
		"sub/only-top.txt":      "kept: anchored rule",
		"sub/.gitignore":        "!x.log\nlocal.txt\n",
		"sub/x.log":             "re-included below",
		"sub/local.txt":         "ignored by nested",
		"build/out.go":          "ignored dir",
		"sub/build":             "a file named build is kept",
		"a.excluded":            "excluded via info/exclude",
		".ignore":               "secret/\n",
		"secret/key":            "ignored by .ignore",
		"sub/deep/.ignore":      "!*.log\n",
		"sub/deep/y.log":        "",
	}
	r := newTestRoot(t, files)
	if err := os.Symlink("a.go", filepath.Join(r.Dir(), "link.go")); err != nil {
		t.Fatal(err)
	}
	want := []string{
		".config/settings.json", ".gitignore", ".hidden", ".ignore", "a.go", "important.log",
		"sub/.gitignore", "sub/build", "sub/deep/.ignore", "sub/deep/y.log", "sub/only-top.txt", "sub/x.log",
	}
	if diff := cmp.Diff(walkAll(t, r, "."), want); diff != "" {
		t.Errorf("walk from root (-got +want):\n%s", diff)
	}
	// Starting below the root still applies the rules of the dirs above.
	wantSub := []string{"sub/.gitignore", "sub/build", "sub/deep/.ignore", "sub/deep/y.log", "sub/only-top.txt", "sub/x.log"}
	if diff := cmp.Diff(walkAll(t, r, "sub"), wantSub); diff != "" {
		t.Errorf("walk from sub (-got +want):\n%s", diff)
	}
	// A workspace inside a repository sees the repository's rules.
	inner, err := NewRoot(filepath.Join(r.Dir(), "sub"))
	if err != nil {
		t.Fatal(err)
	}
	wantInner := []string{".gitignore", "build", "deep/.ignore", "deep/y.log", "only-top.txt", "x.log"}
	if diff := cmp.Diff(walkAll(t, inner, "."), wantInner); diff != "" {
		t.Errorf("walk of a nested workspace (-got +want):\n%s", diff)
	}
}

func TestWalkGitignoreNeedsRepo(t *testing.T) {
	// Outside a git repository .gitignore is not honoured (ripgrep's
	// default); .ignore always is.
	r := newTestRoot(t, map[string]string{".gitignore": "*.log\n", ".ignore": "*.tmp\n", "x.log": "", "y.tmp": "", "z.go": ""})
	want := []string{".gitignore", ".ignore", "x.log", "z.go"}
	if diff := cmp.Diff(walkAll(t, r, "."), want); diff != "" {
		t.Errorf("(-got +want):\n%s", diff)
	}
}

func TestWalkCancel(t *testing.T) {
	files := map[string]string{}
	for _, d := range []string{"a", "b", "c", "d"} {
		for _, f := range []string{"1", "2", "3"} {
			files[d+"/"+f] = ""
		}
	}
	r := newTestRoot(t, files)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := r.walk(ctx, ".", nil, func(walkFile) {}); err == nil {
		t.Error("walk with a cancelled context succeeded")
	}
}

// TestIgnoreAgainstRipgrep lists a tree with tricky ignore rules with both
// the walker and `rg --files --hidden` and expects the same files. It is
// the reference for what is ripgrep's (.ignore files, hidden files, a
// nested repository); for .gitignore semantics git is the reference
// (TestIgnoreAgainstGit), and the .gitignore shapes here are ones where
// ripgrep and git agree.
func TestIgnoreAgainstRipgrep(t *testing.T) {
	rg, err := exec.LookPath("rg")
	if err != nil {
		t.Skip("ripgrep (rg) is not installed")
	}
	files := map[string]string{
		".git/HEAD":              "",
		".git/info/exclude":      "/excluded-at-top\n*.secret\n",
		".gitignore":             "*.o\n/build/\ndocs/**/draft-*\n!keep.o\nlogs/\n\\#hash\nspace\\ \n*.[ab]\n",
		".ignore":                "!important.secret\n",
		"a.o":                    "",
		"keep.o":                 "",
		"x.a":                    "",
		"x.c":                    "",
		"#hash":                  "",
		"space ":                 "",
		"build/out":              "",
		"src/build/kept":         "",
		"docs/a/b/draft-1.md":    "",
		"docs/final.md":          "",
		"docs/draft-top.md":      "",
		"logs/today.txt":         "",
		"src/logs":               "a file, not a dir",
		"excluded-at-top":        "",
		"src/excluded-at-top":    "",
		"key.secret":             "",
		"important.secret":       "",
		"src/.gitignore":         "!*.o\ngenerated/\n",
		"src/x.o":                "",
		"src/generated/g.go":     "",
		"src/deep/.gitignore":    "*\n!*.go\n!*/\n",
		"src/deep/a.go":          "",
		"src/deep/a.txt":         "",
		"src/deep/inner/b.go":    "",
		"src/deep/inner/b.md":    "",
		".hidden/file":           "",
		"vendor/.ignore":         "*.tmp\n",
		"vendor/v.tmp":           "",
		"vendor/v.go":            "",
		"nested/.git/HEAD":       "",
		"nested/.gitignore":      "*.log\n",
		"nested/x.log":           "",
		"nested/x.o":             "",
		"nested/ok.txt":          "",
		"unicode/ünï.o":          "",
		"unicode/ünï.txt":        "",
		"brackets/[x].txt":       "",
		"brackets/.gitignore":    "\\[x\\].txt\n",
		"trailing/dir/file.txt":  "",
		"trailing/.gitignore":    "dir/\n",
		"anchored/sub/a.txt":     "",
		"anchored/.gitignore":    "sub/a.txt\n",
		"anchored/x/sub/a.txt":   "",
		"doublestar/a/b/c/z.txt": "",
		"doublestar/z.txt":       "",
		"doublestar/.gitignore":  "**/z.txt\n!/z.txt\n",
	}
	r := newTestRoot(t, files)
	// rg --hidden lists .git's content; the walker always skips .git.
	cmd := exec.Command(rg, "--files", "--hidden", "--no-config", "-g", "!.git")
	cmd.Dir = r.Dir()
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("rg: %v", err)
	}
	want := strings.Split(strings.TrimSpace(string(out)), "\n")
	slices.Sort(want)
	if diff := cmp.Diff(walkAll(t, r, "."), want); diff != "" {
		t.Errorf("walker vs rg --files (-got +want):\n%s", diff)
	}
}
