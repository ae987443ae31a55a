package agent

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/ioh-lsp/ioh-lsp/internal/agent/model"
)

// The context figures of bench/context.sh, asserted as sizes (never
// timings): fixed scripted transcripts replayed through the real harness,
// every request counted with approxTokens (bytes / 4 of the system
// prompt, messages and tool specs) the same way every run.

// contextStats are the figures of one run's requests.
type contextStats struct {
	requests      int
	sum, largest  int64   // approximate input tokens
	overhead      int64   // system prompt + tool specs of the first request
	prefixMean    float64 // share of each request that prefixes the next
	lastRequestAt []*model.Request
}

func statsOf(reqs []*model.Request) contextStats {
	s := contextStats{requests: len(reqs), lastRequestAt: reqs}
	var prev []byte
	var shares float64
	for i, r := range reqs {
		tok := approxTokens(requestBytes(r))
		s.sum += tok
		s.largest = max(s.largest, tok)
		b, _ := json.Marshal(struct {
			Tools    any `json:"tools"`
			System   any `json:"system"`
			Messages any `json:"messages"`
		}{r.Tools, r.System, r.Messages})
		if i > 0 {
			shares += float64(commonPrefix(prev, b)) / float64(len(prev))
		}
		prev = b
	}
	if len(reqs) > 1 {
		s.prefixMean = shares / float64(len(reqs)-1)
	}
	if len(reqs) > 0 {
		only := *reqs[0]
		only.Messages = nil
		s.overhead = approxTokens(requestBytes(&only))
	}
	return s
}

// runUnmasked runs fn with observation masking off (the reference).
func runUnmasked(fn func()) {
	maskOff = true
	defer func() { maskOff = false }()
	fn()
}

// longRun is the 25-step transcript: a listing, one whole-file read of a
// large file, a grep that hits a minified file, twenty reads of ordinary
// files, an edit and finish.
func longRun() (map[string]string, []turn) {
	files := map[string]string{}
	var big strings.Builder
	for i := 0; big.Len() < 120<<10; i++ {
		fmt.Fprintf(&big, "func handler%d(w http.ResponseWriter, r *http.Request) { serve(w, r, %d) }\n", i, i)
	}
	files["big/big.go"] = big.String()
	var min strings.Builder
	for i := 0; min.Len() < 100<<10; i++ {
		fmt.Fprintf(&min, "function a%d(b){return b+%d};", i, i)
	}
	files["vendor/app.min.js"] = min.String() + "\n"
	turns := []turn{
		say(1000, "list_dir", args{"path": "."}),
		say(1000, "read_file", args{"path": "big/big.go", "limit": 100000}),
		say(1000, "grep", args{"pattern": "function a1\\b"}),
	}
	for i := 0; i < 20; i++ {
		p := fmt.Sprintf("src/f%02d.go", i)
		files[p] = strings.Repeat(fmt.Sprintf("// file %d: a line of ordinary Go code, about sixty bytes\n", i), 25)
		turns = append(turns, say(1000, "read_file", args{"path": p}))
	}
	turns = append(turns, say(1000, "write_file", args{"path": "src/f00.go", "content": "package src\n"}),
		say(1000, "finish", args{"summary": "done"}))
	return files, turns
}

// manyReads is 30 reads of distinct 8 KB files, then a read of the first
// again (the question about it) and finish.
func manyReads() (map[string]string, []turn) {
	files := map[string]string{}
	var turns []turn
	for i := 0; i < 30; i++ {
		p := fmt.Sprintf("pkg/r%02d.txt", i)
		files[p] = strings.Repeat(fmt.Sprintf("file %02d holds line after line of text, each of 64 bytes........\n", i), 128)
		turns = append(turns, say(1000, "read_file", args{"path": p}))
	}
	turns = append(turns, say(1000, "read_file", args{"path": "pkg/r00.txt"}), say(1000, "finish", args{"summary": "done"}))
	return files, turns
}

func runScenario(t *testing.T, files map[string]string, turns []turn) contextStats {
	t.Helper()
	f := newFixture(t, files, map[string][]turn{"": turns})
	c := goal("answer from the files")
	c.Budget.Steps = len(turns) + 1
	res := f.run(t, c)
	if res.Steps != len(turns) {
		t.Fatalf("%d steps (%s: %v), want %d", res.Steps, res.Outcome, res.Err, len(turns))
	}
	return statsOf(f.prov.requests())
}

func TestContextLongRunFigures(t *testing.T) {
	files, turns := longRun()
	var ref contextStats
	runUnmasked(func() { ref = runScenario(t, files, turns) })
	got := runScenario(t, files, turns)
	if os.Getenv("IOH_BENCH") != "" {
		fmt.Printf("FIGURE long_run_steps=%d long_run_input_sum=%d long_run_input_sum_unmasked=%d long_run_sum_ratio=%.3f long_run_largest=%d long_run_largest_unmasked=%d long_run_prefix_reuse=%.3f long_run_prefix_reuse_unmasked=%.3f overhead_tokens=%d\n",
			got.requests, got.sum, ref.sum, float64(got.sum)/float64(ref.sum), got.largest, ref.largest, got.prefixMean, ref.prefixMean, got.overhead)
	}
	if got.sum > 250_000 {
		t.Errorf("Σ input %d tokens over 25 steps, want ≤ 250000 (unmasked: %d)", got.sum, ref.sum)
	}
	if got.largest > 25_000 {
		t.Errorf("largest request %d tokens, want ≤ 25000 (unmasked: %d)", got.largest, ref.largest)
	}
	// The tools bound each result now, so the unmasked run is small too:
	// masking must still take a quarter off it (it fails without).
	if got.sum*4 > ref.sum*3 || got.largest >= ref.largest {
		t.Errorf("masked Σ %d, largest %d: not under 3/4 of the unmasked Σ %d and its largest %d", got.sum, got.largest, ref.sum, ref.largest)
	}
	if got.prefixMean < 0.90 {
		t.Errorf("prefix reuse %.3f, want ≥ 0.90", got.prefixMean)
	}
	if got.overhead > 2500 {
		t.Errorf("fixed overhead %d tokens per request (system prompt + tools), want ≤ 2500", got.overhead)
	}
}

func TestContextManyReadsFigures(t *testing.T) {
	files, turns := manyReads()
	got := runScenario(t, files, turns)
	if os.Getenv("IOH_BENCH") != "" {
		var ref contextStats
		runUnmasked(func() { ref = runScenario(t, files, turns) })
		fmt.Printf("FIGURE reads_steps=%d reads_largest=%d reads_largest_unmasked=%d reads_input_sum=%d reads_input_sum_unmasked=%d reads_prefix_reuse=%.3f\n",
			got.requests, got.largest, ref.largest, got.sum, ref.sum, got.prefixMean)
	}
	if got.largest > 30_000 {
		t.Errorf("largest request %d tokens, want ≤ 30000", got.largest)
	}
	// Every 8 KB read is kept for ten turns, so the boundary moves every
	// maskBatch steps and the step it moves re-sends the last ten: the
	// reuse here is near 1 - 1/maskBatch, not the 0.9 of ordinary runs.
	if got.prefixMean < 0.80 {
		t.Errorf("prefix reuse %.3f, want ≥ 0.80", got.prefixMean)
	}
	// The request after the 30th read: results 21–30 verbatim, 1–20 stubs
	// that name the file, so the model can read the first again.
	req := got.lastRequestAt[30]
	var results []model.ToolResult
	for _, m := range req.Messages {
		results = append(results, m.ToolResults...)
	}
	if len(results) != 30 {
		t.Fatalf("%d results in the 31st request, want 30", len(results))
	}
	for i, r := range results {
		p := fmt.Sprintf("pkg/r%02d.txt", i)
		if i < 20 {
			want := fmt.Sprintf("read_file %s → lines 1–128, ", p)
			if !strings.Contains(r.Content, want) || len(r.Content) > 200 {
				t.Errorf("result %d is not a stub naming %q: %.120q", i+1, want, r.Content)
			}
			continue
		}
		if strings.HasPrefix(r.Content, "[result hidden") || !strings.Contains(r.Content, fmt.Sprintf("file %02d holds", i)) {
			t.Errorf("result %d is not verbatim: %.120q", i+1, r.Content)
		}
	}
}
