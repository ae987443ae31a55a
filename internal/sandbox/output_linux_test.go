package sandbox

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/ioh-lsp/ioh-lsp/internal/sandbox/sandboxtest"
)

// keptHeadTail checks a run that wrote total bytes under an output limit:
// it ran to its end (exit 0, no cap), and its output is the head and tail
// halves with the marker naming the bytes left out.
func keptHeadTail(t *testing.T, out *Outcome, output string, limit, total int64) {
	t.Helper()
	marker := fmt.Sprintf(DroppedMarker, total-limit)
	if out.ExitCode != 0 || out.CapHit != "" || !out.Truncated {
		t.Errorf("flood of %d bytes: exit %d cap %q truncated %v; want 0, none, true", total, out.ExitCode, out.CapHit, out.Truncated)
	}
	if int64(len(output)) != limit+int64(len(marker)) || !strings.Contains(output, marker) {
		t.Errorf("flood kept %d bytes, want %d + the marker %q", len(output), limit, marker)
	}
}

// TestOutputFloodRunsOn: in each tier (and the floor) a command that
// prints past its output limit runs to its end, its last line is kept,
// and a Stream gets every byte.
func TestOutputFloodRunsOn(t *testing.T) {
	for _, tier := range append(tiersHere(t), BackendFloor) {
		t.Run(tier, func(t *testing.T) {
			work := sandboxtest.Dir(t)
			var buf, stream bytes.Buffer
			s := Spec{Argv: []string{"sh", "-c", "head -c 200000 /dev/zero; echo; echo summary: ok"},
				Dir: work, Writable: []string{work}, Backend: tier, Limits: Limits{Output: 10 << 10}, View: testView(),
				Stdout: &buf, Stderr: &buf, Stream: &stream}
			out, err := testRunner().Run(t.Context(), &s)
			if err != nil {
				t.Fatalf("run in %s: %v", tier, err)
			}
			keptHeadTail(t, out, buf.String(), 10<<10, int64(200000+len("\nsummary: ok\n")))
			if !strings.HasSuffix(buf.String(), "summary: ok\n") {
				t.Errorf("the summary line was lost: ends %q", buf.String()[max(0, buf.Len()-40):])
			}
			if stream.Len() != 200000+len("\nsummary: ok\n") {
				t.Errorf("stream got %d bytes, want every one", stream.Len())
			}
		})
	}
}
