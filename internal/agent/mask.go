package agent

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/ioh-lsp/ioh-lsp/internal/agent/model"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/render"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/tools"
)

// Observation masking: once a request passes maskPolicy.threshold, tool
// results older than the last maskKeep become one-line stubs that name
// the call and what it returned. The boundary moves in steps of
// maskBatch results, so the cached prefix is rebuilt once every few steps,
// not at every one. The stored transcript is never rewritten: the mask is
// a pure function of the transcript and runState.Masked (stored with every
// step, so a resume sends what the run would have sent).
const (
	maskKeep  = 10
	maskBatch = 5
	// maskFixedThreshold and maskFixedLimit (approximate tokens) apply
	// when the model's context window is unknown.
	maskFixedThreshold = 24_000
	maskFixedLimit     = 30_000
)

// maskLargeTurns: a large result (over an eighth of the threshold) is
// masked once this many turns have come after it, wherever it stands.
const maskLargeTurns = 2

// maskPolicy is when masking starts (threshold) and the size above which
// it masks past the last maskKeep results (limit), in approximate tokens.
type maskPolicy struct {
	threshold, limit int64
}

// large reports a result of more than an eighth of the threshold.
func (p maskPolicy) large(bytes int) bool { return approxTokens(bytes) > p.threshold/8 }

// maskPolicyFor is 40% and 50% of the model's context window when the
// window is known, else the fixed sizes.
func maskPolicyFor(modelName string) maskPolicy {
	if w := contextWindow(modelName); w > 0 {
		return maskPolicy{threshold: w * 4 / 10, limit: w / 2}
	}
	return maskPolicy{threshold: maskFixedThreshold, limit: maskFixedLimit}
}

// contextWindow is the context window of the model families whose window
// is published, in tokens; 0 when unknown.
func contextWindow(name string) int64 {
	n := strings.ToLower(name)
	if i := strings.LastIndex(n, "/"); i >= 0 {
		n = n[i+1:]
	}
	for _, w := range []struct {
		prefix string
		tokens int64
	}{
		{"claude-", 200_000}, {"gpt-4.1", 1_000_000}, {"gpt-4o", 128_000}, {"gpt-5", 400_000},
		{"o3", 200_000}, {"o4-mini", 200_000}, {"gemini-2.5", 1_000_000},
	} {
		if strings.HasPrefix(n, w.prefix) {
			return w.tokens
		}
	}
	return 0
}

// approxTokens is the count the masking and `make bench` use: bytes / 4,
// rounded up (code and prose average about 4 bytes per token).
func approxTokens(bytes int) int64 { return int64((bytes + 3) / 4) }

// resultRef locates one tool result of the transcript.
type resultRef struct {
	msg, idx  int
	full      int  // bytes sent verbatim
	stub      int  // bytes sent as a stub
	protected bool // never masked: the latest verification feedback
}

// results lists the transcript's tool results, oldest first, with the
// size of each verbatim and as a stub.
func (a *agentRun) results() []resultRef {
	calls := callsByID(a.msgs)
	var out []resultRef
	lastFinish := -1
	for i, m := range a.msgs {
		for j, r := range m.ToolResults {
			c := calls[r.CallID]
			if c.Name == tools.FinishName {
				lastFinish = len(out)
			}
			out = append(out, resultRef{msg: i, idx: j, full: len(r.Content), stub: len(stubText(c, r))})
		}
	}
	if lastFinish >= 0 {
		out[lastFinish].protected = true
	}
	return out
}

func callsByID(msgs []model.Message) map[string]model.ToolCall {
	out := map[string]model.ToolCall{}
	for _, m := range msgs {
		for _, c := range m.ToolCalls {
			out[c.ID] = c
		}
	}
	return out
}

// newestTurn is the index in rs of the first result of the last turn
// (those the model has not seen yet: never masked by size).
func (a *agentRun) newestTurn(rs []resultRef) int {
	if len(rs) == 0 {
		return 0
	}
	last := rs[len(rs)-1].msg
	k := len(rs)
	for k > 0 && rs[k-1].msg == last {
		k--
	}
	return k
}

// masked reports whether result k is shown as a stub with b results
// masked (or, from runs stored before masking, before CompactBefore).
func (a *agentRun) masked(r resultRef, k, b int) bool {
	if r.protected {
		return false
	}
	return k < b || slices.Contains(a.st.MaskedLarge, k) || (r.msg > 0 && r.msg < a.st.CompactBefore)
}

// viewTokens is the approximate size of a request with b results masked.
func (a *agentRun) viewTokens(base int, rs []resultRef, b int) int64 {
	n := base
	for k, r := range rs {
		if a.masked(r, k, b) {
			n += r.stub
		} else {
			n += r.full
		}
	}
	return approxTokens(n)
}

// updateMask moves the mask boundary before a request: when the request
// would pass the threshold, every result older than the last maskKeep
// (rounded down to a multiple of maskBatch) is masked; while it would
// still pass the limit, maskBatch more, never the newest turn's. The
// boundary only moves forward.
func (a *agentRun) updateMask(req *model.Request) {
	if maskOff {
		return
	}
	rs := a.results()
	base := requestBytes(req)
	for _, r := range rs {
		base -= r.full
	}
	a.maskLarge(rs)
	b := a.st.Masked
	if a.viewTokens(base, rs, b) <= a.mask.threshold {
		return
	}
	if over := len(rs) - maskKeep; over > 0 {
		b = max(b, over/maskBatch*maskBatch)
	}
	newest := a.newestTurn(rs)
	for b < newest && a.viewTokens(base, rs, b) > a.mask.limit {
		b = min(b+maskBatch, newest)
	}
	a.st.Masked = b
}

// maskLarge masks each large result maskLargeTurns turns after it came
// (a whole-file read or a grep over a minified file would otherwise ride
// in every request until the threshold).
func (a *agentRun) maskLarge(rs []resultRef) {
	turns := 0
	for k := len(rs) - 1; k >= 0; k-- {
		if k < len(rs)-1 && rs[k].msg != rs[k+1].msg {
			turns++
		}
		r := rs[k]
		if turns < maskLargeTurns || k < a.st.Masked || r.protected || !a.mask.large(r.full) || slices.Contains(a.st.MaskedLarge, k) {
			continue
		}
		a.st.MaskedLarge = append(a.st.MaskedLarge, k)
	}
	slices.Sort(a.st.MaskedLarge)
}

// maskAll is the response to a context overflow: every result but the
// newest turn's and the latest verification feedback becomes a stub.
// false when that masks nothing more.
func (a *agentRun) maskAll() bool {
	newest := a.newestTurn(a.results())
	if newest <= a.st.Masked {
		return false
	}
	a.st.Masked = newest
	return true
}

// view is the transcript as sent: masked results replaced by their stubs.
func (a *agentRun) view() []model.Message {
	rs := a.results()
	calls := callsByID(a.msgs)
	var out []model.Message
	for k, r := range rs {
		if !a.masked(r, k, a.st.Masked) {
			continue
		}
		if out == nil {
			out = make([]model.Message, len(a.msgs))
			copy(out, a.msgs)
		}
		m := &out[r.msg]
		if len(m.ToolResults) > 0 && &m.ToolResults[0] == &a.msgs[r.msg].ToolResults[0] {
			m.ToolResults = append([]model.ToolResult(nil), m.ToolResults...)
		}
		orig := m.ToolResults[r.idx]
		m.ToolResults[r.idx] = model.ToolResult{CallID: orig.CallID, Content: stubText(calls[orig.CallID], orig), IsError: orig.IsError}
	}
	if out == nil {
		return a.msgs
	}
	return out
}

// stubText is a masked result: the call and what it returned, and how to
// see it again.
func stubText(c model.ToolCall, r model.ToolResult) string {
	what := describeCall(c)
	got := describeResult(c, r)
	return fmt.Sprintf("[result hidden to save context: %s → %s; call again to see it]", what, got)
}

// describeCall names a call by its tool and main arguments.
func describeCall(c model.ToolCall) string {
	var p map[string]any
	_ = json.Unmarshal(c.Arguments, &p)
	str := func(k string) string { s, _ := p[k].(string); return s }
	name := c.Name
	if name == "" {
		name = "tool call"
	}
	switch {
	case str("path") != "" && str("pattern") != "":
		return fmt.Sprintf("%s %q in %s", name, render.OneLine(str("pattern"), 60), str("path"))
	case str("pattern") != "":
		return fmt.Sprintf("%s %q", name, render.OneLine(str("pattern"), 60))
	case str("path") != "":
		return name + " " + str("path")
	case str("shell") != "":
		return fmt.Sprintf("%s %q", name, render.OneLine(str("shell"), 60))
	case p["argv"] != nil:
		b, _ := json.Marshal(p["argv"])
		return name + " " + render.OneLine(string(b), 60)
	case str("goal") != "":
		return fmt.Sprintf("%s %q", name, render.OneLine(str("goal"), 60))
	}
	return name
}

// describeResult says what a result held: for read_file the lines, for
// an error its first line, else its size in lines and bytes.
func describeResult(c model.ToolCall, r model.ToolResult) string {
	size := sizeText(len(r.Content))
	if r.IsError {
		first, _, _ := strings.Cut(r.Content, "\n")
		return fmt.Sprintf("error %q", render.OneLine(first, 100))
	}
	lines := strings.Count(r.Content, "\n")
	if r.Content != "" && !strings.HasSuffix(r.Content, "\n") {
		lines++
	}
	if c.Name == "read_file" {
		if first, last, total, ok := tools.ReadWindow(r.Content); ok {
			if total > last {
				return fmt.Sprintf("lines %d–%d of %d, %s", first, last, total, size)
			}
			return fmt.Sprintf("lines %d–%d, %s", first, last, size)
		}
		var p tools.ReadFileParams
		_ = json.Unmarshal(c.Arguments, &p)
		from := max(p.Offset, 1)
		return fmt.Sprintf("lines %d–%d, %s", from, from+max(lines, 1)-1, size)
	}
	return fmt.Sprintf("%d lines, %s", lines, size)
}

func sizeText(n int) string {
	if n < 1024 {
		return fmt.Sprintf("%d B", n)
	}
	return fmt.Sprintf("%.1f KB", float64(n)/1024)
}

// maskOff turns masking off: the unmasked reference of the context
// figures (tests only).
var maskOff bool
