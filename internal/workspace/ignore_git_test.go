package workspace

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// gitWorld is a world of its own for git and the walker: HOME,
// XDG_CONFIG_HOME and no system configuration.
type gitWorld struct {
	git  string
	home string
	xdg  string
	env  []string
}

func newGitWorld(t *testing.T) *gitWorld {
	t.Helper()
	git, err := exec.LookPath("git")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("git is not installed (CI installs it)")
		}
		t.Skip("git is not installed")
	}
	base := t.TempDir()
	w := &gitWorld{git: git, home: filepath.Join(base, "home"), xdg: filepath.Join(base, "xdg")}
	for _, d := range []string{w.home, filepath.Join(w.xdg, "git")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("HOME", w.home)
	t.Setenv("XDG_CONFIG_HOME", w.xdg)
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	t.Setenv("GIT_CONFIG_GLOBAL", "") // restored after the test
	os.Unsetenv("GIT_CONFIG_GLOBAL")
	w.env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+w.home, "XDG_CONFIG_HOME="+w.xdg, "LC_ALL=C")
	return w
}

// gitCase is one generated repository: files (path → content; ignore
// files hold rules), the content of .git/info/exclude and of the global
// excludes file, and how git finds the latter.
type gitCase struct {
	files   map[string]string
	exclude string
	global  string
	how     int // 0: $XDG_CONFIG_HOME/git/ignore, 1: core.excludesFile "~/…" in ~/.gitconfig, 2: in .git/config
}

func (c *gitCase) String() string {
	var b strings.Builder
	keys := slices.Sorted(mapKeys(c.files))
	for _, k := range keys {
		if strings.HasSuffix(k, ".gitignore") {
			fmt.Fprintf(&b, "  %s:\n", k)
			for _, l := range strings.Split(strings.TrimSuffix(c.files[k], "\n"), "\n") {
				fmt.Fprintf(&b, "      %q\n", l)
			}
		} else {
			fmt.Fprintf(&b, "  %q\n", k)
		}
	}
	if c.exclude != "" {
		fmt.Fprintf(&b, "  .git/info/exclude: %q\n", c.exclude)
	}
	if c.global != "" {
		fmt.Fprintf(&b, "  global excludes (way %d): %q\n", c.how, c.global)
	}
	return b.String()
}

func mapKeys(m map[string]string) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// run builds the case in a fresh repository and returns what git and the
// walker list.
func (w *gitWorld) run(t *testing.T, c *gitCase) (gitFiles, walked []string) {
	t.Helper()
	dir := t.TempDir()
	w.cmd(t, dir, "init", "-q", "--template=", ".")
	writeTree(t, dir, c.files)
	writeTree(t, dir, map[string]string{".git/info/exclude": c.exclude})
	for _, f := range []string{filepath.Join(w.home, ".gitconfig"), filepath.Join(w.xdg, "git", "ignore"), filepath.Join(w.home, "global-ignore")} {
		os.Remove(f)
	}
	switch c.how {
	case 0:
		writeTree(t, w.xdg, map[string]string{"git/ignore": c.global})
	case 1:
		writeTree(t, w.home, map[string]string{"global-ignore": c.global, ".gitconfig": "[user]\n\tname = x\n[core]\n\texcludesFile = ~/global-ignore ; a comment\n"})
	case 2:
		writeTree(t, w.home, map[string]string{"global-ignore": c.global})
		w.cmd(t, dir, "config", "core.excludesFile", filepath.Join(w.home, "global-ignore"))
	}
	out := w.cmd(t, dir, "ls-files", "-z", "-o", "--exclude-standard")
	for _, f := range bytes.Split(out, []byte{0}) {
		if len(f) > 0 {
			gitFiles = append(gitFiles, string(f))
		}
	}
	slices.Sort(gitFiles)
	r, err := NewRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	walked, err = r.Find(ctx, "**")
	if err != nil {
		t.Fatal(err)
	}
	return gitFiles, walked
}

func (w *gitWorld) cmd(t *testing.T, dir string, args ...string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, w.git, args...)
	cmd.Dir, cmd.Env = dir, w.env
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git %v: %v: %s", args, err, stderr.String())
	}
	return out
}

var (
	genDirs  = []string{"a", "b", "sub", "foo", "d.o", ".hd", "x y"}
	genFiles = []string{"a", "b", "ab", "sub", "foo", "x.o", "y.log", ".h", "#c", "!n", "sp ", "[x]", "a b", "ü.txt", "B", "a*b", "]x", "-", "a\\"}
	genSegs  = []string{"a", "b", "sub", "foo", "x.o", "*", "?", "a*", "*.o", "*.log", "[ab]", "[!a]*", "[[:upper:]]", "**", "s?b", "*b", `\#c`, `\!n`, `sp\ `, `\[x\]`, "d.*", ".h*", "[a-c]*", "fo[[:alpha:]]", "**foo", "ab**", "x y",
		"[]x]*", "[a-]*", `\*`, `a\`, "***", "*/**", "[[:digit:][:alpha:]]*", "[!]]*", `[\]]*`, "[x", "a[[:bogus:]]", "s[^u]b", "\u00fc*", "**/", "/**"}
)

func genLine(rng *rand.Rand) string {
	var b strings.Builder
	switch rng.IntN(10) {
	case 0:
		return "# comment"
	case 1, 2:
		b.WriteByte('!')
	}
	if rng.IntN(4) == 0 {
		b.WriteByte('/')
	}
	n := 1 + rng.IntN(3)
	for i := range n {
		if i > 0 {
			b.WriteByte('/')
		}
		b.WriteString(genSegs[rng.IntN(len(genSegs))])
	}
	if rng.IntN(4) == 0 {
		b.WriteByte('/')
	}
	if rng.IntN(8) == 0 {
		b.WriteString("  ")
	}
	return b.String()
}

func genRules(rng *rand.Rand, max int) string {
	var lines []string
	for range 1 + rng.IntN(max) {
		lines = append(lines, genLine(rng))
	}
	return strings.Join(lines, "\n") + "\n"
}

func genCase(rng *rand.Rand) *gitCase {
	c := &gitCase{files: map[string]string{}, how: rng.IntN(3)}
	var dirs []string
	var add func(prefix string, depth int)
	add = func(prefix string, depth int) {
		dirs = append(dirs, prefix)
		for range 1 + rng.IntN(4) {
			c.files[prefix+genFiles[rng.IntN(len(genFiles))]] = "x"
		}
		if depth < 3 {
			for range rng.IntN(3) {
				add(prefix+genDirs[rng.IntN(len(genDirs))]+"/", depth+1)
			}
		}
	}
	add("", 0)
	// A name cannot be a file and a directory at once.
	for k := range c.files {
		for _, d := range dirs {
			if d == k+"/" {
				delete(c.files, k)
			}
		}
	}
	for _, d := range dirs {
		if d == "" || rng.IntN(3) == 0 {
			c.files[d+".gitignore"] = genRules(rng, 5)
		}
	}
	if rng.IntN(3) == 0 {
		c.exclude = genRules(rng, 3)
	}
	if rng.IntN(3) == 0 {
		c.global = genRules(rng, 3)
	}
	return c
}

// shrink drops files and ignore lines while the walker still disagrees
// with git, so a failure prints the smallest case found.
func (w *gitWorld) shrink(t *testing.T, c *gitCase) *gitCase {
	differs := func(c *gitCase) bool {
		g, f := w.run(t, c)
		return !slices.Equal(g, f)
	}
	for changed := true; changed; {
		changed = false
		for _, k := range slices.Sorted(mapKeys(c.files)) {
			try := &gitCase{files: maps2(c.files), exclude: c.exclude, global: c.global, how: c.how}
			delete(try.files, k)
			if differs(try) {
				c, changed = try, true
				continue
			}
			if !strings.HasSuffix(k, ".gitignore") {
				continue
			}
			lines := strings.Split(strings.TrimSuffix(c.files[k], "\n"), "\n")
			for i := 0; i < len(lines) && len(lines) > 1; i++ {
				try := &gitCase{files: maps2(c.files), exclude: c.exclude, global: c.global, how: c.how}
				rest := slices.Delete(slices.Clone(lines), i, i+1)
				try.files[k] = strings.Join(rest, "\n") + "\n"
				if differs(try) {
					c, lines, changed = try, rest, true
					i--
				}
			}
		}
		for _, drop := range []func(*gitCase){func(c *gitCase) { c.exclude = "" }, func(c *gitCase) { c.global = "" }} {
			try := &gitCase{files: maps2(c.files), exclude: c.exclude, global: c.global, how: c.how}
			drop(try)
			if (try.exclude != c.exclude || try.global != c.global) && differs(try) {
				c, changed = try, true
			}
		}
	}
	return c
}

func maps2(m map[string]string) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// TestIgnoreAgainstGit generates random trees with random .gitignore
// files, info/exclude and global excludes (seeded) and expects the walker
// to list exactly the files `git ls-files -o --exclude-standard` lists in
// a fresh repository. A difference is shrunk to a minimal tree and printed.
func TestIgnoreAgainstGit(t *testing.T) {
	w := newGitWorld(t)
	trees := 300
	if testing.Short() {
		trees = 60
	}
	rng := rand.New(rand.NewPCG(17, 2026))
	failures := 0
	for i := range trees {
		c := genCase(rng)
		g, f := w.run(t, c)
		if slices.Equal(g, f) {
			continue
		}
		failures++
		m := w.shrink(t, c)
		g, f = w.run(t, m)
		t.Errorf("tree %d: walker differs from git ls-files -o --exclude-standard (-walker +git):\n%s\nminimal tree:\n%s", i, cmp.Diff(f, g), m)
		if failures >= 3 {
			t.Fatal("stopping after 3 differing trees")
		}
	}
}

// TestIgnoreGitShapes pins the shapes that once differed from git, and
// the global excludes file found each way git finds it.
func TestIgnoreGitShapes(t *testing.T) {
	w := newGitWorld(t)
	cases := []*gitCase{
		{files: map[string]string{".gitignore": "sub/**\n", "sub": "a file named sub", "x/sub/in": "", "sub2/y": ""}},
		{files: map[string]string{".gitignore": "foo/**/\n", "foo/direct": "", "foo/d/in": "", "foo/d/e/in": ""}},
		{files: map[string]string{".gitignore": "a/foo**\n", "a/foobar/x": "", "a/foo": "", "a/fo": ""}},
		{files: map[string]string{".gitignore": "*\n!*/\n!*.go\n", "a.go": "", "a.txt": "", "d/b.go": "", "d/b.md": ""}},
		{files: map[string]string{".gitignore": "d/\n!d/keep\n", "d/keep": "", "d/x": ""}},
		{files: map[string]string{".gitignore": "\\#c\n\\!n\nsp\\ \n[[:digit:]]*\n", "#c": "", "!n": "", "sp ": "", "1x": "", "x1": ""}},
		{files: map[string]string{".gitignore": "*.o\n", "sub/.gitignore": "!*.o\n", "a.o": "", "sub/b.o": ""}},
		{files: map[string]string{"a.o": "", "b.log": "", "c": ""}, exclude: "*.log\n", global: "*.o\n!b.log\n", how: 0},
		{files: map[string]string{"a.o": "", "c": ""}, global: "*.o\n", how: 1},
		{files: map[string]string{"a.o": "", "c": ""}, global: "/c\n", how: 2},
	}
	for i, c := range cases {
		g, f := w.run(t, c)
		if diff := cmp.Diff(f, g); diff != "" {
			t.Errorf("case %d (-walker +git):\n%s\n%s", i, diff, c)
		}
	}
}
