package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/ioh-lsp/ioh-lsp/internal/agent/event"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/trace"
)

// TestHarnessFigures measures what bench/harness.sh reports; it runs only
// with IOH_BENCH=1 and asserts nothing about time (the figures are printed
// with a reference measured in the same run).
//
//   - durable step commit: a 200-step scripted run (instant model), the
//     mean time per step of the whole harness, and the mean time of the
//     commit alone (the run's steps committed again into a fresh run);
//     reference: the same number of appends of the same bytes to a file,
//     each followed by fsync.
//   - prompt bytes per step over a 30-step run, and the share of each
//     request that is a byte-identical prefix of the next (the cacheable
//     part).
func TestHarnessFigures(t *testing.T) {
	if os.Getenv("IOH_BENCH") == "" {
		t.Skip("set IOH_BENCH=1 (bench/harness.sh) to measure")
	}
	const steps = 200
	var turns []turn
	for i := 0; i < steps-1; i++ {
		if i%2 == 0 {
			turns = append(turns, say(1000, "read_file", args{"path": fmt.Sprintf("f%d.txt", i%10)}))
		} else {
			turns = append(turns, say(1000, "write_file", args{"path": fmt.Sprintf("f%d.txt", i%10), "content": fmt.Sprintf("version %d\n", i)}))
		}
	}
	turns = append(turns, say(1000, "finish", args{"summary": "done"}))
	files := map[string]string{}
	for i := 0; i < 10; i++ {
		files[fmt.Sprintf("f%d.txt", i)] = "initial\n"
	}
	f := newFixture(t, files, map[string][]turn{"": turns})
	c := goal("many steps")
	c.Budget.Steps = steps + 1
	start := time.Now()
	res := f.run(t, c)
	wall := time.Since(start)
	if res.Steps != steps {
		t.Fatalf("%d steps (%s: %v), want %d", res.Steps, res.Outcome, res.Err, steps)
	}

	// The commit alone: the same steps, re-committed into a new run.
	ctx := context.Background()
	stored, err := f.store.Steps(ctx, res.RunID)
	if err != nil {
		t.Fatal(err)
	}
	evs, _ := f.store.Events(ctx, res.RunID)
	byStep := map[int][]event.Event{}
	for _, e := range evs {
		e.Run = "bench"
		byStep[e.Step] = append(byStep[e.Step], e)
	}
	if err := f.store.CreateRun(ctx, &trace.RunRow{ID: "bench", Root: "bench", Goal: "b", Contract: json.RawMessage(`{}`), Outcome: "running", FirstStarted: time.Now()}); err != nil {
		t.Fatal(err)
	}
	var payload int
	commitStart := time.Now()
	for _, st := range stored {
		cp := *st
		cp.Run = "bench"
		cp.State = json.RawMessage(`{"stall_sig":"0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"}`)
		cp.Totals = trace.Totals{Steps: st.N}
		cp.Events = byStep[st.N]
		payload += len(cp.Messages) + len(cp.Changes) + len(cp.State)
		for _, e := range cp.Events {
			b, _ := json.Marshal(e)
			payload += len(b)
		}
		if err := f.store.CommitStep(ctx, &cp); err != nil {
			t.Fatal(err)
		}
	}
	commit := time.Since(commitStart) / time.Duration(len(stored))

	// The same commits with synchronous=NORMAL, for what FULL costs.
	normal, err := trace.OpenWith(ctx, filepath.Join(t.TempDir(), "normal.db"), trace.Options{Synchronous: "NORMAL"})
	if err != nil {
		t.Fatal(err)
	}
	defer normal.Close()
	normal.CreateRun(ctx, &trace.RunRow{ID: "bench", Root: "bench", Goal: "b", Contract: json.RawMessage(`{}`), Outcome: "running", FirstStarted: time.Now()})
	normalStart := time.Now()
	for _, st := range stored {
		cp := *st
		cp.Run = "bench"
		cp.Totals = trace.Totals{Steps: st.N}
		cp.Events = byStep[st.N]
		if err := normal.CommitStep(ctx, &cp); err != nil {
			t.Fatal(err)
		}
	}
	commitNormal := time.Since(normalStart) / time.Duration(len(stored))

	// Reference: fsync'd appends of the same bytes, same directory.
	ref := fsyncAppends(t, filepath.Dir(f.store.Path()), len(stored), payload/len(stored))

	fmt.Printf("FIGURE steps=%d harness_per_step_ms=%.3f commit_per_step_ms=%.3f fsync_append_ms=%.3f commit_vs_fsync=%.2f commit_normal_ms=%.3f bytes_per_commit=%d\n",
		steps, ms(wall/steps), ms(commit), ms(ref), float64(commit)/float64(ref), ms(commitNormal), payload/len(stored))

	// Prompt bytes and cacheable prefix over 30 steps.
	var turns30 []turn
	for i := 0; i < 29; i++ {
		turns30 = append(turns30, say(1000, "grep", args{"pattern": fmt.Sprintf("version %d", i)}))
	}
	turns30 = append(turns30, say(1000, "finish", args{"summary": "done"}))
	f2 := newFixture(t, files, map[string][]turn{"": turns30})
	f2.run(t, goal("thirty steps"))
	reqs := f2.prov.requests()
	var total, minShare, sumShare float64 = 0, 1, 0
	var prev []byte
	for i, r := range reqs {
		b, _ := json.Marshal(struct {
			Tools    any `json:"tools"`
			System   any `json:"system"`
			Messages any `json:"messages"`
		}{r.Tools, r.System, r.Messages})
		total += float64(len(b))
		if i > 0 {
			share := float64(commonPrefix(prev, b)) / float64(len(b))
			sumShare += share
			minShare = min(minShare, share)
		}
		prev = b
	}
	fmt.Printf("FIGURE prompt_steps=%d prompt_bytes_per_step=%.0f cacheable_prefix_mean=%.3f cacheable_prefix_min=%.3f\n",
		len(reqs), total/float64(len(reqs)), sumShare/float64(len(reqs)-1), minShare)
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func commonPrefix(a, b []byte) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}

// fsyncAppends times n appends of size bytes to a file, each fsynced.
func fsyncAppends(t *testing.T, dir string, n, size int) time.Duration {
	t.Helper()
	fh, err := os.OpenFile(filepath.Join(dir, "fsync-ref.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	buf := make([]byte, size)
	start := time.Now()
	for i := 0; i < n; i++ {
		if _, err := fh.Write(buf); err != nil {
			t.Fatal(err)
		}
		if err := fh.Sync(); err != nil {
			t.Fatal(err)
		}
	}
	return time.Since(start) / time.Duration(n)
}
