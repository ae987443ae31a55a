package wire

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"math"
	"sync"
)

// ReportedCost collects the charge a provider reports inside a streamed
// chat completion: the `usage.cost` of OpenRouter's usage accounting, in
// USD (OpenRouter credits are dollars), which the SDK's Usage type drops.
// With a provider key of the user's own (`is_byok`), `cost` is only
// OpenRouter's fee and the upstream charge comes in
// `cost_details.upstream_inference_cost`; both are counted.
type ReportedCost struct {
	mu   sync.Mutex
	cost *float64
}

// USD returns the reported charge; ok is false when none was seen.
func (r *ReportedCost) USD() (usd float64, ok bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.cost == nil {
		return 0, false
	}
	return *r.cost, true
}

func (r *ReportedCost) set(v float64) {
	r.mu.Lock()
	r.cost = &v
	r.mu.Unlock()
}

type costKey struct{}

// TapReportedCost returns a context under which Transport reads a
// successful response's server-sent events as they stream by and records
// the charge of any `data:` event carrying `usage.cost` into r.
func TapReportedCost(ctx context.Context, r *ReportedCost) context.Context {
	return context.WithValue(ctx, costKey{}, r)
}

// maxTapLine bounds the line the tap keeps: a usage event is small, and a
// longer line (a big content delta) is passed through unread.
const maxTapLine = 64 << 10

// costTap passes a response body through unchanged, looking at each
// complete line for a usage event.
type costTap struct {
	body io.ReadCloser
	r    *ReportedCost
	line []byte
	skip bool // the current line outgrew maxTapLine
}

func (t *costTap) Read(p []byte) (int, error) {
	n, err := t.body.Read(p)
	for _, b := range p[:n] {
		if b == '\n' {
			if !t.skip {
				t.scan(t.line)
			}
			t.line, t.skip = t.line[:0], false
			continue
		}
		if t.skip {
			continue
		}
		if len(t.line) >= maxTapLine {
			t.skip = true
			continue
		}
		t.line = append(t.line, b)
	}
	if err == io.EOF && !t.skip && len(t.line) > 0 {
		t.scan(t.line)
		t.line = t.line[:0]
	}
	return n, err
}

func (t *costTap) Close() error { return t.body.Close() }

// scan records the charge of one SSE line when it is a data event whose
// usage object has a numeric cost.
func (t *costTap) scan(line []byte) {
	line = bytes.TrimRight(line, "\r")
	data, ok := bytes.CutPrefix(line, []byte("data:"))
	if !ok || !bytes.Contains(data, []byte(`"cost"`)) {
		return
	}
	var ev struct {
		Usage *struct {
			Cost        *float64 `json:"cost"`
			IsBYOK      bool     `json:"is_byok"`
			CostDetails *struct {
				Upstream *float64 `json:"upstream_inference_cost"`
			} `json:"cost_details"`
		} `json:"usage"`
	}
	if json.Unmarshal(bytes.TrimSpace(data), &ev) != nil || ev.Usage == nil || ev.Usage.Cost == nil {
		return
	}
	usd := *ev.Usage.Cost
	if ev.Usage.IsBYOK && ev.Usage.CostDetails != nil && ev.Usage.CostDetails.Upstream != nil {
		usd += *ev.Usage.CostDetails.Upstream
	}
	if usd < 0 || math.IsInf(usd, 0) {
		return // nonsense: price the call from the table instead
	}
	t.r.set(usd)
}
