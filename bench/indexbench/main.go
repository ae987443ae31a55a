// Command indexbench measures the workspace index as the server uses it:
// repeated searches through a warm, watched index against ripgrep on the
// same corpus (median of N, identical result sets), the index's build
// time and size against the corpus, the process's RSS with and without
// the index, and freshness (a save until a search returns the new text).
// bench/grep.sh runs it.
package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ioh-lsp/ioh-lsp/internal/workspace"
)

type query struct {
	name string
	o    workspace.GrepOptions
	rg   []string
}

var queries = []query{
	{"rare literal", workspace.GrepOptions{Pattern: "ParseDuration"}, []string{"ParseDuration"}},
	{"common literal", workspace.GrepOptions{Pattern: "err != nil"}, []string{"err != nil"}},
	{"regex with literal", workspace.GrepOptions{Pattern: `func \w+Parse\w*\(`}, []string{`func \w+Parse\w*\(`}},
	{"case-insensitive", workspace.GrepOptions{Pattern: "unexpected eof", IgnoreCase: true}, []string{"-i", "unexpected eof"}},
}

func main() {
	corpus := flag.String("corpus", "", "directory to search")
	runs := flag.Int("runs", 10, "runs per measurement")
	buildTo := flag.String("build", "", "only build the index file of -corpus under this state directory (for `ioh-lsp grep`) and exit")
	flag.Parse()
	if *buildTo != "" {
		r, err := workspace.NewRoot(*corpus)
		if err == nil {
			_, err = workspace.BuildIndex(context.Background(), r, workspace.IndexOptions{StateDir: *buildTo})
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "indexbench:", err)
			os.Exit(1)
		}
		return
	}
	if err := run(*corpus, *runs); err != nil {
		fmt.Fprintln(os.Stderr, "indexbench:", err)
		os.Exit(1)
	}
}

func run(corpus string, runs int) error {
	ctx := context.Background()
	rg, err := exec.LookPath("rg")
	if err != nil {
		return fmt.Errorf("ripgrep (rg) is not installed")
	}
	state, err := os.MkdirTemp("", "indexbench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(state)
	root, err := workspace.NewRoot(corpus)
	if err != nil {
		return err
	}
	// Baseline: the same searches by scanning, then RSS without an index.
	for _, q := range queries {
		if _, err := root.Grep(ctx, q.o); err != nil {
			return err
		}
	}
	rssBefore := settledRSS()

	start := time.Now()
	x, err := workspace.OpenIndex(root, workspace.IndexOptions{StateDir: state, Watch: true})
	if err != nil {
		return err
	}
	defer x.Close()
	if err := x.WaitWarm(ctx); err != nil {
		return err
	}
	build := time.Since(start)
	st := x.Status()
	corpusBytes, corpusFiles := treeSize(corpus)

	fmt.Printf("%-20s %9s %9s %8s %8s  %s\n", "pattern (warm index)", "ioh ms", "rg ms", "rg/ioh", "results", "same set")
	fail := false
	for _, q := range queries {
		ms, err := root.Grep(ctx, q.o)
		if err != nil {
			return err
		}
		got := make([]string, len(ms))
		for i, m := range ms {
			got[i] = m.Path + ":" + strconv.Itoa(m.Line) + ":" + m.Text
		}
		args := append([]string{"-n", "--no-heading", "--hidden", "--no-config"}, q.rg...)
		want, err := rgLines(corpus, rg, args)
		if err != nil {
			return err
		}
		slices.Sort(got)
		same := slices.Equal(got, want)
		if !same {
			fail = true
		}
		ti := median(runs, func() { root.Grep(ctx, q.o) })
		tr := median(runs, func() { rgLines(corpus, rg, args) })
		fmt.Printf("%-20s %9.2f %9.2f %8.1f %8d  %v\n", q.name, ms1(ti), ms1(tr), float64(tr)/float64(ti), len(got), yesNo(same))
	}
	rssAfter := settledRSS()
	fmt.Printf("index: built in %.2f s; %d files, %.1f MiB corpus -> %.1f MiB index (%.0f%%)\n",
		build.Seconds(), corpusFiles, mib(corpusBytes), mib(st.Bytes), 100*float64(st.Bytes)/float64(corpusBytes))
	fmt.Printf("rss: %v without the index, %v with it warm: +%.1f MiB (goal <= 30)\n", rssBefore, rssAfter, mib(rssAfter.total-rssBefore.total))
	fmt.Printf("peak rss of this process so far (the build included): %.1f MiB\n", mib(status("VmHWM:")))
	if err := freshness(ctx, corpus, runs); err != nil {
		return err
	}
	if st.Scanned > 0 {
		fmt.Printf("note: %d searches fell back to a scan\n", x.Status().Scanned)
	}
	if fail {
		return fmt.Errorf("result sets differ from ripgrep's")
	}
	return nil
}

// freshness copies a slice of the corpus to a temporary workspace, warms
// an index on it and measures a save until a search returns the new text.
func freshness(ctx context.Context, corpus string, runs int) error {
	ws, err := os.MkdirTemp("", "indexbench-ws-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(ws)
	src := filepath.Join(corpus, "net", "http")
	if _, err := os.Stat(src); err != nil {
		src = corpus
	}
	if err := exec.Command("cp", "-r", src, filepath.Join(ws, "w")).Run(); err != nil {
		return fmt.Errorf("copy %s: %w", src, err)
	}
	state, err := os.MkdirTemp("", "indexbench-state-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(state)
	r, err := workspace.NewRoot(ws)
	if err != nil {
		return err
	}
	x, err := workspace.OpenIndex(r, workspace.IndexOptions{StateDir: state, Watch: true})
	if err != nil {
		return err
	}
	defer x.Close()
	if err := x.WaitWarm(ctx); err != nil {
		return err
	}
	var times []time.Duration
	for i := range runs {
		word := fmt.Sprintf("freshword%dx%d", i, time.Now().UnixNano())
		t0 := time.Now()
		if err := os.WriteFile(filepath.Join(ws, "w", "fresh.go"), []byte("package http // "+word+"\n"), 0o644); err != nil {
			return err
		}
		for {
			ms, err := r.Grep(ctx, workspace.GrepOptions{Pattern: word})
			if err != nil {
				return err
			}
			if len(ms) == 1 {
				break
			}
		}
		times = append(times, time.Since(t0))
	}
	slices.Sort(times)
	st := x.Status()
	fmt.Printf("freshness: save -> search returns the new text: median %.2f ms, max %.2f ms (%d files; served %d, scanned %d)\n",
		ms1(times[len(times)/2]), ms1(times[len(times)-1]), st.Files, st.Served, st.Scanned)
	return nil
}

func rgLines(dir, rg string, args []string) ([]string, error) {
	cmd := exec.Command(rg, args...)
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
			return nil, fmt.Errorf("rg: %w", err)
		}
	}
	lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	if len(out) == 0 {
		lines = nil
	}
	slices.Sort(lines)
	return lines, nil
}

func median(n int, f func()) time.Duration {
	f() // warm up
	ts := make([]time.Duration, n)
	for i := range ts {
		t0 := time.Now()
		f()
		ts[i] = time.Since(t0)
	}
	slices.Sort(ts)
	return ts[n/2]
}

func treeSize(dir string) (int64, int) {
	var size int64
	n := 0
	filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if fi, err := d.Info(); err == nil {
				size += fi.Size()
				n++
			}
		}
		return nil
	})
	return size, n
}

// settledRSS is the resident set after a GC that returns freed memory:
// total, anonymous (heap, stacks) and file-backed (the mapped index).
func settledRSS() rss {
	runtime.GC()
	debug.FreeOSMemory()
	return rss{status("VmRSS:"), status("RssAnon:"), status("RssFile:")}
}

type rss struct{ total, anon, file int64 }

func (r rss) String() string {
	return fmt.Sprintf("%.1f MiB (anon %.1f, file %.1f)", mib(r.total), mib(r.anon), mib(r.file))
}

// status reads a kB field of /proc/self/status, in bytes.
func status(field string) int64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, l := range bytes.Split(data, []byte("\n")) {
		if v, ok := bytes.CutPrefix(l, []byte(field)); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(string(v)), "kB")), 10, 64)
			return kb << 10
		}
	}
	return 0
}

func ms1(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
func mib(b int64) float64         { return float64(b) / (1 << 20) }
func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "NO"
}
