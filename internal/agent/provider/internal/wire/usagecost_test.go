package wire

import (
	"bytes"
	"io"
	"math"
	"strings"
	"testing"
	"testing/iotest"
)

// tap reads body through a cost tap, in reads of at most n bytes, and
// returns what passed through and the reported charge.
func tap(t *testing.T, body string, n int) (string, float64, bool) {
	t.Helper()
	var r ReportedCost
	ct := &costTap{body: io.NopCloser(strings.NewReader(body)), r: &r}
	var src io.Reader = ct
	if n == 1 {
		src = iotest.OneByteReader(ct)
	}
	out, err := io.ReadAll(src)
	if err != nil {
		t.Fatal(err)
	}
	usd, ok := r.USD()
	return string(out), usd, ok
}

func TestCostTap(t *testing.T) {
	big := `data: {"choices":[{"delta":{"content":"` + strings.Repeat("x", 100<<10) + `"}}],"usage":{"cost":7}}`
	tests := []struct {
		name   string
		body   string
		want   float64
		wantOK bool
	}{
		{"final usage event", "data: {\"choices\":[]}\n\ndata: {\"choices\":[],\"usage\":{\"prompt_tokens\":5,\"cost\":0.0123}}\n\ndata: [DONE]\n\n", 0.0123, true},
		{"CRLF lines", "data: {\"usage\":{\"cost\":0.5}}\r\n\r\n", 0.5, true},
		{"no trailing newline", "data: {\"usage\":{\"cost\":0.25}}", 0.25, true},
		{"byok adds the upstream charge", "data: {\"usage\":{\"cost\":0.001,\"is_byok\":true,\"cost_details\":{\"upstream_inference_cost\":0.02}}}\n", 0.021, true},
		{"upstream ignored without byok", "data: {\"usage\":{\"cost\":0.001,\"cost_details\":{\"upstream_inference_cost\":0.02}}}\n", 0.001, true},
		{"no usage", "data: {\"choices\":[{\"delta\":{\"content\":\"the cost\"}}]}\n", 0, false},
		{"cost outside usage", "data: {\"cost\":3}\n", 0, false},
		{"comment line", ": {\"usage\":{\"cost\":3}}\n", 0, false},
		{"null cost", "data: {\"usage\":{\"cost\":null}}\n", 0, false},
		{"negative cost", "data: {\"usage\":{\"cost\":-1}}\n", 0, false},
		{"overflowing byok sum", "data: {\"usage\":{\"cost\":1e308,\"is_byok\":true,\"cost_details\":{\"upstream_inference_cost\":1e308}}}\n", 0, false},
		{"malformed json", "data: {\"usage\":{\"cost\":0.1\n", 0, false},
		{"an over-long line is not read", big + "\n", 0, false},
		{"a usage event after an over-long line", big + "\ndata: {\"usage\":{\"cost\":0.2}}\n", 0.2, true},
	}
	for _, tt := range tests {
		for _, n := range []int{1, 4096} {
			out, usd, ok := tap(t, tt.body, n)
			if out != tt.body {
				t.Errorf("%s (reads of %d): the tap changed the body", tt.name, n)
			}
			if ok != tt.wantOK || (ok && (usd < tt.want-1e-12 || usd > tt.want+1e-12)) {
				t.Errorf("%s (reads of %d): cost %v, %v; want %v, %v", tt.name, n, usd, ok, tt.want, tt.wantOK)
			}
		}
	}
}

// FuzzCostTap: whatever a server streams, the tap passes it through
// unchanged, never panics, and reports no negative charge.
func FuzzCostTap(f *testing.F) {
	f.Add([]byte("data: {\"usage\":{\"cost\":0.01}}\n\n"))
	f.Add([]byte("data: {\"usage\":{\"cost\":1e308,\"is_byok\":true,\"cost_details\":{\"upstream_inference_cost\":1e308}}}\n"))
	f.Add([]byte(": OPENROUTER PROCESSING\r\n\r\ndata: [DONE]"))
	f.Fuzz(func(t *testing.T, body []byte) {
		var r ReportedCost
		out, err := io.ReadAll(&costTap{body: io.NopCloser(bytes.NewReader(body)), r: &r})
		if err != nil || !bytes.Equal(out, body) {
			t.Fatalf("passed through %q (%v), want %q", out, err, body)
		}
		if usd, ok := r.USD(); ok && !(usd >= 0 && usd <= math.MaxFloat64) {
			t.Fatalf("reported charge %v", usd)
		}
	})
}
