package workspace

import (
	"context"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// indexWorld gives a test its own HOME, XDG_* and state directory.
func indexWorld(t *testing.T) string {
	t.Helper()
	base := t.TempDir()
	for _, k := range []string{"HOME", "XDG_CONFIG_HOME", "XDG_STATE_HOME", "IOH_STATE_DIR"} {
		d := filepath.Join(base, strings.ToLower(k))
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		t.Setenv(k, d)
	}
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	return os.Getenv("IOH_STATE_DIR")
}

var indexWords = []string{"alpha", "Beta", "gamma", "needle", "NEEDLE", "err != nil", "func Parse", "ünï", "kelvin", "x"}

func randomText(rng *rand.Rand) string {
	var b strings.Builder
	for range 1 + rng.IntN(6) {
		for range 1 + rng.IntN(6) {
			b.WriteString(indexWords[rng.IntN(len(indexWords))])
			b.WriteByte(' ')
		}
		b.WriteByte('\n')
	}
	return b.String()
}

var indexQueries = []GrepOptions{
	{Pattern: "needle"},
	{Pattern: "needle", IgnoreCase: true},
	{Pattern: "err != nil", Literal: true},
	{Pattern: `func \w+`},
	{Pattern: "gamma|ünï"},
	{Pattern: "alpha", Globs: []string{"*.go"}},
	{Pattern: "beta", IgnoreCase: true, Dir: "d1"},
	{Pattern: "a", Max: 5},
	{Pattern: "^x"},
}

// compareWithScan runs every query through the indexed root (or change
// set) and through a plain scan of the same files and overlay.
func compareWithScan(t *testing.T, step string, indexed, plain func(context.Context, GrepOptions) ([]Match, error)) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, q := range indexQueries {
		got, gerr := indexed(ctx, q)
		want, werr := plain(ctx, q)
		if (gerr != nil) != (werr != nil) {
			t.Fatalf("%s: query %+v: index error %v, scan error %v", step, q, gerr, werr)
		}
		if diff := cmp.Diff(got, want); diff != "" {
			t.Fatalf("%s: query %+v: index (-got) vs scan (+want):\n%s", step, q, diff)
		}
	}
}

// TestIndexEqualsScanUnderEdits edits a workspace at random (writes,
// appends, same-size rewrites, deletes, renames of files and directories,
// new directories, ignored files, .gitignore changes, change set edits)
// and after every edit expects searches through the watched index to
// return exactly what a fresh scan returns.
func TestIndexEqualsScanUnderEdits(t *testing.T) {
	state := indexWorld(t)
	rng := rand.New(rand.NewPCG(3, 17))
	files := map[string]string{".git/HEAD": "", ".gitignore": "*.log\nbuild/\n"}
	for i := range 40 {
		files[fmt.Sprintf("d%d/f%d.%s", i%4, i, []string{"go", "txt", "md"}[i%3])] = randomText(rng)
	}
	files["build/out.txt"] = "needle in ignored dir\n"
	files["bin.dat"] = "needle\x00binary\n"
	r := newTestRoot(t, files)
	plainRoot, err := NewRoot(r.Dir())
	if err != nil {
		t.Fatal(err)
	}
	x, err := OpenIndex(r, IndexOptions{StateDir: state, Watch: true, Debounce: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { x.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := x.WaitWarm(ctx); err != nil {
		t.Fatal(err)
	}
	compareWithScan(t, "warm", r.Grep, plainRoot.Grep)

	cs, plainCS := NewChangeSet(r), NewChangeSet(plainRoot)
	existing := func() []string {
		var out []string
		filepath.WalkDir(r.Dir(), func(p string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() && !strings.Contains(p, "/.git/") {
				rel, _ := filepath.Rel(r.Dir(), p)
				out = append(out, filepath.ToSlash(rel))
			}
			return nil
		})
		slices.Sort(out)
		return out
	}
	write := func(rel, content string) {
		abs := filepath.Join(r.Dir(), filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(abs), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(abs, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for step := range 120 {
		ex := existing()
		pick := ex[rng.IntN(len(ex))]
		var what string
		switch op := rng.IntN(12); op {
		case 0, 1:
			rel := fmt.Sprintf("d%d/new%d.go", rng.IntN(5), step)
			write(rel, randomText(rng))
			what = "create " + rel
		case 2, 3:
			write(pick, randomText(rng))
			what = "rewrite " + pick
		case 4:
			// Same size, same first bytes: only the stamp tells.
			old, _ := os.ReadFile(filepath.Join(r.Dir(), pick))
			b := []byte(old)
			if len(b) > 0 {
				b[len(b)-1] = "xyz\n"[rng.IntN(4)]
			}
			write(pick, string(b))
			what = "same-size edit " + pick
		case 5:
			os.Remove(filepath.Join(r.Dir(), pick))
			what = "delete " + pick
		case 6:
			to := fmt.Sprintf("d%d/moved%d.txt", rng.IntN(4), step)
			os.MkdirAll(filepath.Dir(filepath.Join(r.Dir(), to)), 0o755)
			os.Rename(filepath.Join(r.Dir(), pick), filepath.Join(r.Dir(), to))
			what = "rename " + pick + " -> " + to
		case 7:
			from := fmt.Sprintf("d%d", rng.IntN(5))
			to := fmt.Sprintf("d%d", 5+step)
			os.Rename(filepath.Join(r.Dir(), from), filepath.Join(r.Dir(), to))
			what = "rename dir " + from + " -> " + to
		case 8:
			dir := fmt.Sprintf("n%d/deep", step)
			write(dir+"/a.go", randomText(rng))
			write(dir+"/b.log", "needle ignored\n")
			what = "new tree " + dir
		case 9:
			if rng.IntN(3) == 0 {
				write(".gitignore", []string{"*.log\nbuild/\n", "*.log\n", "*.md\nbuild/\n"}[rng.IntN(3)])
				what = "change .gitignore"
			} else {
				write(fmt.Sprintf("build/o%d.txt", step), "needle\n")
				what = "write ignored file"
			}
		case 10:
			rel := fmt.Sprintf("d%d/cs%d.go", rng.IntN(4), step)
			text := randomText(rng)
			if err := cs.WriteFile(rel, []byte(text)); err != nil {
				t.Fatal(err)
			}
			if err := plainCS.WriteFile(rel, []byte(text)); err != nil {
				t.Fatal(err)
			}
			what = "change set write " + rel
		case 11:
			err1, err2 := cs.Delete(pick), plainCS.Delete(pick)
			if (err1 == nil) != (err2 == nil) {
				t.Fatalf("change set delete %s: %v vs %v", pick, err1, err2)
			}
			what = "change set delete " + pick
		}
		step := fmt.Sprintf("step %d (%s)", step, what)
		compareWithScan(t, step, r.Grep, plainRoot.Grep)
		compareWithScan(t, step+" with the change set", cs.Grep, plainCS.Grep)
	}
	st := x.Status()
	t.Logf("index status: %+v", st)
	if st.Served < st.Scanned {
		t.Errorf("the index answered %d searches and left %d to the scan: it should answer most", st.Served, st.Scanned)
	}
}

// TestIndexWithoutWatcher is the one-shot command's path: an index file
// built earlier, then edits with no watcher running; each file's stamp
// decides whether the index may skip it.
func TestIndexWithoutWatcher(t *testing.T) {
	state := indexWorld(t)
	rng := rand.New(rand.NewPCG(5, 8))
	files := map[string]string{".git/HEAD": "", ".gitignore": "*.log\n"}
	for i := range 30 {
		files[fmt.Sprintf("d%d/f%d.go", i%3, i)] = randomText(rng)
	}
	r := newTestRoot(t, files)
	plain, err := NewRoot(r.Dir())
	if err != nil {
		t.Fatal(err)
	}
	// Files changed within racySlack of the build are never trusted; let
	// the tree settle so the index is actually used.
	time.Sleep(time.Duration(racySlack) + 50*time.Millisecond)
	ctx := context.Background()
	st, err := BuildIndex(ctx, r, IndexOptions{StateDir: state})
	if err != nil {
		t.Fatal(err)
	}
	if st.Files != 31 {
		t.Fatalf("indexed %d files, want 31", st.Files)
	}
	x, err := OpenIndex(r, IndexOptions{StateDir: state})
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	compareWithScan(t, "fresh", r.Grep, plain.Grep)
	for step := range 40 {
		rel := fmt.Sprintf("d%d/f%d.go", rng.IntN(4), rng.IntN(35))
		abs := filepath.Join(r.Dir(), filepath.FromSlash(rel))
		if rng.IntN(4) == 0 {
			os.Remove(abs)
		} else {
			os.MkdirAll(filepath.Dir(abs), 0o755)
			if err := os.WriteFile(abs, []byte(randomText(rng)), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		compareWithScan(t, fmt.Sprintf("step %d (%s)", step, rel), r.Grep, plain.Grep)
	}
	if s := x.Status(); s.Served == 0 || s.Scanned != 0 {
		t.Errorf("status %+v: want every search answered through the index", s)
	}
}

// TestIndexFilePermissions checks the index file is 0600 in a 0700
// directory, and that a damaged file is refused, not trusted.
func TestIndexFilePermissions(t *testing.T) {
	state := indexWorld(t)
	r := newTestRoot(t, map[string]string{"a.go": "package a\n"})
	if _, err := BuildIndex(context.Background(), r, IndexOptions{StateDir: state}); err != nil {
		t.Fatal(err)
	}
	p := indexPath(state, r.Dir())
	for _, c := range []struct {
		path string
		mode os.FileMode
	}{{p, 0o600}, {filepath.Dir(p), 0o700}} {
		fi, err := os.Stat(c.path)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != c.mode {
			t.Errorf("%s: mode %v, want %v", c.path, fi.Mode().Perm(), c.mode)
		}
	}
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	for _, bad := range [][]byte{data[:len(data)/2], append(slices.Clone(data[:len(data)-9]), 'X'), {}} {
		if err := os.WriteFile(p, bad, 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := loadIndex(p); err == nil {
			t.Errorf("a damaged index file of %d bytes loaded", len(bad))
		}
	}
}

// TestIndexAfterDirectoryMoves pins the sequences where a watcher can lose
// track: a directory renamed inside the tree and then edited, moved out
// and back, replaced by a file, and a new directory filled right after it
// appears.
func TestIndexAfterDirectoryMoves(t *testing.T) {
	state := indexWorld(t)
	r := newTestRoot(t, map[string]string{".git/HEAD": "", ".git/info/": "", "a/x.go": "alpha\n", "a/deep/y.go": "beta\n", "b/z.go": "gamma\n"})
	outside := t.TempDir()
	plain, err := NewRoot(r.Dir())
	if err != nil {
		t.Fatal(err)
	}
	x, err := OpenIndex(r, IndexOptions{StateDir: state, Watch: true})
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := x.WaitWarm(ctx); err != nil {
		t.Fatal(err)
	}
	abs := func(rel string) string { return filepath.Join(r.Dir(), filepath.FromSlash(rel)) }
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	// rebuilt makes the index forget its changed paths (an ignore file
	// changed: it rebuilds), so later edits are only seen through the
	// watcher.
	rebuilt := func() {
		before := x.Status().Builds
		must(os.WriteFile(abs(".gitignore"), []byte("*.log\n"), 0o644))
		for {
			r.Grep(ctx, GrepOptions{Pattern: "x"}) // syncs the watcher
			if st := x.Status(); st.Builds > before && st.Warm {
				return
			}
			if ctx.Err() != nil {
				t.Fatal("the index did not rebuild")
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	steps := []struct {
		name string
		do   func()
	}{
		{"rename a -> c", func() { must(os.Rename(abs("a"), abs("c"))) }},
		{"rebuild", rebuilt},
		{"edit c/x.go", func() { must(os.WriteFile(abs("c/x.go"), []byte("needle one\n"), 0o644)) }},
		{"edit c/deep/y.go", func() { must(os.WriteFile(abs("c/deep/y.go"), []byte("needle two\n"), 0o644)) }},
		{"edit c/x.go again", func() { must(os.WriteFile(abs("c/x.go"), []byte("needle three\n"), 0o644)) }},
		{"move c out", func() { must(os.Rename(abs("c"), filepath.Join(outside, "c"))) }},
		{"edit it outside", func() { must(os.WriteFile(filepath.Join(outside, "c", "x.go"), []byte("needle four\n"), 0o644)) }},
		{"move it back as d", func() { must(os.Rename(filepath.Join(outside, "c"), abs("d"))) }},
		{"rebuild again", rebuilt},
		{"edit d/deep/y.go", func() { must(os.WriteFile(abs("d/deep/y.go"), []byte("needle five\n"), 0o644)) }},
		{"replace b by a file", func() { must(os.RemoveAll(abs("b"))); must(os.WriteFile(abs("b"), []byte("needle six\n"), 0o644)) }},
		{"new dir filled at once", func() {
			must(os.MkdirAll(abs("e/f/g"), 0o755))
			must(os.WriteFile(abs("e/f/g/h.go"), []byte("needle seven\n"), 0o644))
		}},
		{"edit inside the new dir", func() { must(os.WriteFile(abs("e/f/g/h.go"), []byte("needle eight\n"), 0o644)) }},
		// Ignore inputs the watcher cannot see: the index must notice.
		{"info/exclude hides d", func() { must(os.WriteFile(abs(".git/info/exclude"), []byte("/d/\n"), 0o644)) }},
		{"global excludes hide b", func() {
			must(os.MkdirAll(filepath.Join(os.Getenv("XDG_CONFIG_HOME"), "git"), 0o755))
			must(os.WriteFile(filepath.Join(os.Getenv("XDG_CONFIG_HOME"), "git", "ignore"), []byte("/b\n"), 0o644))
		}},
		{"rebuild with the new rules", rebuilt},
		{"info/exclude emptied", func() { must(os.WriteFile(abs(".git/info/exclude"), nil, 0o644)) }},
	}
	for _, s := range steps {
		s.do()
		compareWithScan(t, s.name, r.Grep, plain.Grep)
	}
	ms, err := r.Grep(ctx, GrepOptions{Pattern: "needle"})
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) != 3 { // d/x.go (edited outside), d/deep/y.go, e/f/g/h.go; b is excluded globally
		t.Errorf("final search found %v", ms)
	}
	if st := x.Status(); st.Served == 0 {
		t.Errorf("status %+v: the index answered nothing", st)
	}
}
