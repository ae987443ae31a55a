package workspace

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestResolve(t *testing.T) {
	outside := t.TempDir()
	r := newTestRoot(t, map[string]string{"a/b.txt": "b", "c.txt": "c", "real/": ""})
	d := r.Dir()
	links := map[string]string{
		"in":          "a",     // relative, inside
		"a/up":        "..",    // to the root itself
		"out":         outside, // absolute, outside
		"rel-out":     "../" + filepath.Base(outside),
		"a/sneaky":    "../../",              // climbs out
		"abs-in":      filepath.Join(d, "a"), // absolute, inside
		"chain":       "in/up/out",           // through links to outside
		"chain-ok":    "in/up/c.txt",
		"loop":        "loop",
		"dangling-in": "a/new.txt",
	}
	for name, target := range links {
		if err := os.Symlink(target, filepath.Join(d, filepath.FromSlash(name))); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		rel     string
		want    string // relative to the root
		wantErr error
	}{
		{rel: "", want: "."},
		{rel: ".", want: "."},
		{rel: "a/b.txt", want: "a/b.txt"},
		{rel: "a/./b.txt", want: "a/b.txt"},
		{rel: "a/../c.txt", want: "c.txt"},
		{rel: "new/dir/file.txt", want: "new/dir/file.txt"},
		{rel: "in/b.txt", want: "a/b.txt"},
		{rel: "in/up/c.txt", want: "c.txt"},
		{rel: "abs-in/b.txt", want: "a/b.txt"},
		{rel: "chain-ok", want: "c.txt"},
		{rel: "dangling-in", want: "a/new.txt"},
		{rel: "in/new/x", want: "a/new/x"},
		{rel: "/etc/passwd", wantErr: ErrAbsolute},
		{rel: "..", wantErr: ErrEscape},
		{rel: "../x", wantErr: ErrEscape},
		{rel: "a/../../x", wantErr: ErrEscape},
		{rel: "out", wantErr: ErrSymlinkEscape},
		{rel: "out/file", wantErr: ErrSymlinkEscape},
		{rel: "rel-out/x", wantErr: ErrSymlinkEscape},
		{rel: "a/sneaky", wantErr: ErrSymlinkEscape},
		{rel: "in/sneaky/x", wantErr: ErrSymlinkEscape},
		{rel: "chain", wantErr: ErrSymlinkEscape},
		{rel: "loop", wantErr: ErrInvalidPath},
		{rel: "a\x00b", wantErr: ErrInvalidPath},
	}
	for _, tt := range tests {
		t.Run(tt.rel, func(t *testing.T) {
			got, err := r.Resolve(tt.rel)
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("Resolve(%q) = %q, %v; want error %v", tt.rel, got, err, tt.wantErr)
				}
				var pe *PathError
				if !errors.As(err, &pe) {
					t.Fatalf("error %v is not a *PathError", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Resolve(%q): %v", tt.rel, err)
			}
			rel, err := r.Rel(got)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(rel, tt.want); diff != "" {
				t.Errorf("Resolve(%q) (-got +want):\n%s", tt.rel, diff)
			}
		})
	}
}

func TestNewRootErrors(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "f")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{file, filepath.Join(dir, "missing")} {
		if _, err := NewRoot(p); err == nil {
			t.Errorf("NewRoot(%q) succeeded", p)
		}
	}
}

func TestRel(t *testing.T) {
	r := newTestRoot(t, map[string]string{"a/b": ""})
	tests := []struct {
		abs     string
		want    string
		wantErr bool
	}{
		{abs: r.Dir(), want: "."},
		{abs: filepath.Join(r.Dir(), "a", "b"), want: "a/b"},
		{abs: filepath.Join(r.Dir(), "a", "..", "a"), want: "a"},
		{abs: filepath.Dir(r.Dir()), wantErr: true},
		{abs: r.Dir() + "x", wantErr: true},
		{abs: "relative", wantErr: true},
	}
	for _, tt := range tests {
		got, err := r.Rel(tt.abs)
		if (err != nil) != tt.wantErr {
			t.Errorf("Rel(%q) error = %v, wantErr %v", tt.abs, err, tt.wantErr)
			continue
		}
		if diff := cmp.Diff(got, tt.want); diff != "" {
			t.Errorf("Rel(%q) (-got +want):\n%s", tt.abs, diff)
		}
	}
}

func TestDocumentOverlay(t *testing.T) {
	r := newTestRoot(t, map[string]string{"a.go": "disk"})
	read := func(rel string) string {
		t.Helper()
		b, err := r.ReadFile(rel)
		if err != nil {
			return "error: " + err.Error()
		}
		return string(b)
	}
	if got := read("a.go"); got != "disk" {
		t.Fatalf("before overlay: %q", got)
	}
	buf := []byte("buffer")
	r.SetDocument("./a.go", buf)
	buf[0] = 'X' // the root keeps its own copy
	if diff := cmp.Diff(read("a.go"), "buffer"); diff != "" {
		t.Errorf("overlay (-got +want):\n%s", diff)
	}
	r.SetDocument("new.go", []byte("unsaved"))
	if diff := cmp.Diff(read("new.go"), "unsaved"); diff != "" {
		t.Errorf("unsaved new file (-got +want):\n%s", diff)
	}
	r.SetDocument("../escape", []byte("x")) // ignored
	if got := read("../escape"); !strings.Contains(got, "escapes") {
		t.Errorf("escape read = %q", got)
	}
	r.CloseDocument("a.go")
	if diff := cmp.Diff(read("a.go"), "disk"); diff != "" {
		t.Errorf("after close (-got +want):\n%s", diff)
	}
}

// FuzzResolve checks the confinement invariant: whatever the input,
// Resolve either refuses it or returns a path whose existing part, with
// every symlink evaluated, lies inside the root.
func FuzzResolve(f *testing.F) {
	for _, s := range []string{"", ".", "a", "a/b", "../a", "/abs", "in/../../x", "out/x", "in/up/up/x",
		"a//b", "a/./b/..", "loop/x", "in/sneaky", `..\x`, "a\x00", "in/new/../../..", "abs-in/../.."} {
		f.Add(s)
	}
	outside := f.TempDir()
	dir := f.TempDir()
	r0, err := NewRoot(dir)
	if err != nil {
		f.Fatal(err)
	}
	d := r0.Dir()
	if err := os.MkdirAll(filepath.Join(d, "a", "b"), 0o755); err != nil {
		f.Fatal(err)
	}
	for name, target := range map[string]string{"in": "a", "a/up": "..", "out": outside, "a/sneaky": "../../",
		"abs-in": filepath.Join(d, "a"), "loop": "loop"} {
		if err := os.Symlink(target, filepath.Join(d, filepath.FromSlash(name))); err != nil {
			f.Fatal(err)
		}
	}
	f.Fuzz(func(t *testing.T, rel string) {
		got, err := r0.Resolve(rel)
		if err != nil {
			return
		}
		// Evaluate the longest existing prefix for real.
		p := got
		var tail []string
		for {
			if _, err := os.Lstat(p); err == nil {
				break
			}
			tail = append(tail, filepath.Base(p))
			p = filepath.Dir(p)
		}
		real, err := filepath.EvalSymlinks(p)
		if err != nil {
			return // a loop the kernel would refuse too
		}
		if _, ok := within(d, real); !ok {
			t.Fatalf("Resolve(%q) = %q, which is %q outside %q", rel, got, real, d)
		}
		for _, c := range tail {
			if c == ".." {
				t.Fatalf("Resolve(%q) = %q keeps a .. in its missing tail", rel, got)
			}
		}
	})
}
