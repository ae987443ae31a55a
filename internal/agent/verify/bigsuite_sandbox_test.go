package verify_test

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/metrics"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ioh-lsp/ioh-lsp/internal/agent/contain"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/contract"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/verify"
	"github.com/ioh-lsp/ioh-lsp/internal/workspace"
)

// bigModule writes a Go module of pkgs packages with tests tests each;
// every test logs lines lines of chatter. Package p000's TestTarget fails
// until target.go returns 42; it returns the tree's root.
func bigModule(t *testing.T, pkgs, tests, lines int) string {
	t.Helper()
	root := t.TempDir()
	write := func(rel, body string) {
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("go.mod", "module example.com/big\n\ngo 1.22\n")
	chatter := strings.Repeat("chatter ", 12)
	for p := range pkgs {
		name := fmt.Sprintf("p%03d", p)
		var b strings.Builder
		fmt.Fprintf(&b, "package %s\n\nimport \"testing\"\n\n", name)
		for i := range tests {
			fmt.Fprintf(&b, "func TestCase%04d(t *testing.T) {\n\tfor i := 0; i < %d; i++ {\n\t\tt.Logf(\"case %d line %%d: %s\", i)\n\t}\n}\n\n", i, lines, i, chatter)
		}
		write(name+"/"+name+"_test.go", b.String())
		write(name+"/"+name+".go", "package "+name+"\n")
	}
	write("p000/target.go", "package p000\n\n// Target is the answer.\nfunc Target() int { return 41 }\n")
	write("p000/target_test.go", "package p000\n\nimport \"testing\"\n\nfunc TestTarget(t *testing.T) {\n\tif got := Target(); got != 42 {\n\t\tt.Errorf(\"Target() = %d, want 42\", got)\n\t}\n}\n")
	return root
}

// countingSandbox counts the bytes streamed to requests' Stream.
type countingSandbox struct {
	inner contain.Sandbox
	n     atomic.Int64
}

func (s *countingSandbox) Exec(ctx context.Context, req *contain.Request) (*contain.Result, error) {
	if req.Stream != nil {
		r := *req
		r.Stream = countWriter{req.Stream, &s.n}
		req = &r
	}
	return s.inner.Exec(ctx, req)
}

type countWriter struct {
	w io.Writer
	n *atomic.Int64
}

func (c countWriter) Write(p []byte) (int, error) { c.n.Add(int64(len(p))); return c.w.Write(p) }

// heapPeak samples the live heap (as of the latest collection) every few
// milliseconds until stop, and returns the highest figure seen above the
// first.
func heapPeak() (stop func() uint64) {
	sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	read := func() uint64 { metrics.Read(sample); return sample[0].Value.Uint64() }
	base, peak := read(), uint64(0)
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // ends when stop closes done
		defer wg.Done()
		for {
			select {
			case <-done:
				return
			case <-time.After(5 * time.Millisecond):
				if v := read(); v > base && v-base > peak {
					peak = v - base
				}
			}
		}
	}()
	return func() uint64 { close(done); wg.Wait(); return peak }
}

// TestBigSuiteVerified: a module of 40 packages and 4,000 chatty tests
// (several MB of test2json events) is judged from the whole stream: the
// red phase names the one failing test, the fix is verified with every
// test seen to run and --approve auto applies it; the verifier's own heap
// stays bounded (reported; the kept text is 256 KiB per run). Before,
// verification kept 1 MiB of events, cut the stream and failed the
// correct change.
func TestBigSuiteVerified(t *testing.T) {
	if testing.Short() {
		t.Skip("builds 40 test binaries twice")
	}
	const pkgs, tests, lines = 40, 100, 3
	root := bigModule(t, pkgs, tests, lines)
	fix := []workspace.Change{{Path: "p000/target.go", Op: workspace.OpModify,
		Content: []byte("package p000\n\n// Target is the answer.\nfunc Target() int { return 42 }\n")}}
	v := contract.Verify{RedGreen: true, Checks: []contract.Check{{Name: "unit", Run: []string{"go", "test", "./..."}, Timeout: 10 * time.Minute}}}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	sb := &countingSandbox{inner: goSandbox(t)}
	stop := heapPeak()
	rep, err := verify.RunWith(ctx, verify.Options{Sandbox: sb, Root: root, Changes: fix, Verify: v})
	peak := stop()
	if err != nil {
		t.Fatal(err)
	}
	red, green := rep.Checks[0], rep.Checks[1]
	if red.Tests == nil || green.Tests == nil {
		t.Fatalf("no per-test results: red %+v green %+v", red.Problems, green.Problems)
	}
	t.Logf("tests ran: %d; test2json streams %.1f MB in all (2 runs); verifier heap peak %.1f MB above its start", green.Tests.Ran, float64(sb.n.Load())/1e6, float64(peak)/1e6)
	if os.Getenv("IOH_BENCH") != "" { // bench/verify.sh
		fmt.Printf("FIGURE bigsuite_tests=%d bigsuite_stream_bytes=%d verifier_heap_peak_bytes=%d heap_peak_per_stream_byte=%.3f\n",
			green.Tests.Ran, sb.n.Load(), peak, float64(peak)/float64(sb.n.Load()))
	}
	if sb.n.Load() < 4<<20 {
		t.Errorf("the suite streamed %d bytes, want several MB", sb.n.Load())
	}
	if len(red.Failures) != 1 || red.Failures[0].Test != "TestTarget (example.com/big/p000)" ||
		len(red.Locations) != 1 || red.Locations[0].Path != "p000/target_test.go" || !strings.Contains(red.Locations[0].Message, "want 42") {
		t.Errorf("red phase: failures %+v locations %+v", red.Failures, red.Locations)
	}
	if !rep.Verified() || green.Tests.Ran != pkgs*tests+1 || len(green.Fixed) != 1 {
		t.Errorf("verified %v: green ran %d tests (want %d), fixed %v, problems %v", rep.Verified(), green.Tests.Ran, pkgs*tests+1, green.Fixed, green.Problems)
	}
	if !autoApplies(t, rep) {
		t.Error("--approve auto does not apply the verified change")
	}
	if peak > 64<<20 {
		t.Errorf("the verifier's heap peaked %d MB above its start, want it bounded (< 64 MB)", peak>>20)
	}
}
