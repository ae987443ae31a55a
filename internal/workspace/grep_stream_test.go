package workspace

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestSearchFileMatchesInMemory streams random files whose lines straddle
// the read chunks and expects exactly the matches of a search over the
// whole content held in memory.
func TestSearchFileMatchesInMemory(t *testing.T) {
	rng := rand.New(rand.NewPCG(2, 17))
	dir := t.TempDir()
	words := []string{"alpha", "needle", "Needle", "x", " ", "err != nil", "\t", "ünï", "NEEDLE"}
	patterns := []GrepOptions{
		{Pattern: "needle"}, {Pattern: "needle", IgnoreCase: true}, {Pattern: "^alpha"}, {Pattern: `x$`},
		{Pattern: `ne+dle\s+x`}, {Pattern: "err != nil", Literal: true}, {Pattern: "needle", Max: 3}, {Pattern: "^$"},
	}
	for i := range 40 {
		var b bytes.Buffer
		size := rng.IntN(3 * readChunk)
		for b.Len() < size {
			if rng.IntN(50) == 0 {
				b.WriteString(strings.Repeat("y", rng.IntN(2*readChunk))) // a line longer than a chunk
			}
			for range rng.IntN(12) {
				b.WriteString(words[rng.IntN(len(words))])
			}
			b.WriteByte('\n')
		}
		data := b.Bytes()
		if rng.IntN(3) == 0 && len(data) > 0 {
			data = data[:len(data)-1] // no final newline
		}
		abs := filepath.Join(dir, strconv.Itoa(i))
		if err := os.WriteFile(abs, data, 0o644); err != nil {
			t.Fatal(err)
		}
		for _, o := range patterns {
			m, err := compileGrep(o)
			if err != nil {
				t.Fatal(err)
			}
			want := m.search("f", data, nil)
			var bp []byte
			got, err := m.searchFile("f", abs, &bp)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(got, want); diff != "" {
				t.Fatalf("file %d (%d bytes), pattern %q: streamed (-got) vs in memory (+want):\n%s", i, len(data), o.Pattern, diff)
			}
		}
	}
}

// TestSearchFileLongLine checks a line longer than maxLineLen: it is
// reported once with its own number, and the lines after it keep theirs.
func TestSearchFileLongLine(t *testing.T) {
	var b bytes.Buffer
	b.WriteString("needle one\n")
	long := bytes.Repeat([]byte("z"), 3*maxLineLen)
	copy(long[maxLineLen/2:], "needle")
	copy(long[5*maxLineLen/2:], "needle")
	b.Write(long)
	b.WriteString("\nnothing\nneedle four\n")
	abs := filepath.Join(t.TempDir(), "long.txt")
	if err := os.WriteFile(abs, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	m, err := compileGrep(GrepOptions{Pattern: "needle"})
	if err != nil {
		t.Fatal(err)
	}
	var bp []byte
	got, err := m.searchFile("long.txt", abs, &bp)
	if err != nil {
		t.Fatal(err)
	}
	var lines []int
	for _, g := range got {
		lines = append(lines, g.Line)
		if len(g.Text) > maxLineLen+readChunk {
			t.Errorf("line %d: text of %d bytes, more than the line cap", g.Line, len(g.Text))
		}
	}
	if diff := cmp.Diff(lines, []int{1, 2, 4}); diff != "" {
		t.Errorf("matching lines (-got +want):\n%s", diff)
	}
	if cap(bp) > maxLineLen+readChunk {
		t.Errorf("buffer grew to %d bytes, past the bound %d", cap(bp), maxLineLen+readChunk)
	}
}

// TestGrepMemoryBound searches a tree holding a 256 MiB text file in a
// child process and expects its peak RSS to stay under 64 MiB, with the
// matches at the start, the middle and the very end of the file found.
// Reading the file whole would cost more than 256 MiB.
func TestGrepMemoryBound(t *testing.T) {
	if dir := os.Getenv("IOH_GREP_MEMORY_CHILD"); dir != "" {
		grepMemoryChild(dir)
		return
	}
	if _, err := os.Stat("/proc/self/status"); err != nil {
		t.Skip("peak RSS is read from /proc/self/status (Linux)")
	}
	dir := t.TempDir()
	f, err := os.Create(filepath.Join(dir, "big.log"))
	if err != nil {
		t.Fatal(err)
	}
	block := bytes.Repeat([]byte("2026-11-30 15:04:05 INFO request served in 3ms path=/api/v1/items\n"), (1<<20)/67)
	const blocks = 256
	for i := range blocks {
		if i == 0 || i == blocks/2 || i == blocks-1 {
			fmt.Fprintf(f, "ERROR needle in block %d\n", i)
		}
		if _, err := f.Write(block); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	writeTree(t, dir, map[string]string{"small.go": "package x // ERROR needle\n"})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestGrepMemoryBound$", "-test.count=1")
	cmd.Env = append(os.Environ(), "IOH_GREP_MEMORY_CHILD="+dir, "GOGC=100", "GOMEMLIMIT=off")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	var matches, hwmKB int
	for _, l := range strings.Split(string(out), "\n") {
		if _, err := fmt.Sscanf(l, "matches=%d hwm_kb=%d", &matches, &hwmKB); err == nil {
			break
		}
	}
	if matches != 4 {
		t.Fatalf("child found %d matches, want 4 (3 in big.log, 1 in small.go):\n%s", matches, out)
	}
	t.Logf("peak RSS grepping a %d MiB file: %d KiB", blocks, hwmKB)
	if hwmKB == 0 || hwmKB > 64<<10 {
		t.Errorf("peak RSS %d KiB, want at most 64 MiB", hwmKB)
	}
}

func grepMemoryChild(dir string) {
	r, err := NewRoot(dir)
	if err != nil {
		fmt.Println(err)
		os.Exit(1)
	}
	ms, err := r.Grep(context.Background(), GrepOptions{Pattern: `ERROR \w+`})
	if err != nil {
		fmt.Println(err)
		os.Exit(1)
	}
	status, _ := os.ReadFile("/proc/self/status")
	hwm := 0
	for _, l := range strings.Split(string(status), "\n") {
		if v, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			hwm, _ = strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")))
		}
	}
	fmt.Printf("matches=%d hwm_kb=%d\n", len(ms), hwm)
}
