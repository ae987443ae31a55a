package agent

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/ioh-lsp/ioh-lsp/internal/agent/contract"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/model"
)

// The trace keeps every result whole: masking changes only what is sent.
func TestMaskLeavesTheStoredTranscriptWhole(t *testing.T) {
	files, turns := manyReads()
	f := newFixture(t, files, map[string][]turn{"": turns})
	c := goal("read")
	c.Budget.Steps = 40
	res := f.run(t, c)
	steps, err := f.store.Steps(context.Background(), res.RunID)
	if err != nil {
		t.Fatal(err)
	}
	var ms []model.Message
	if err := json.Unmarshal(steps[0].Messages, &ms); err != nil {
		t.Fatal(err)
	}
	sent := f.prov.requests()[1].Messages[2].ToolResults[0].Content
	if got := ms[1].ToolResults[0].Content; got != sent || !strings.Contains(got, "file 00 holds") {
		t.Errorf("stored first result is not whole: %.80q", got)
	}
	last := f.prov.requests()[30]
	if first := last.Messages[2].ToolResults[0].Content; !strings.HasPrefix(first, "[result hidden") {
		t.Errorf("the sent first result is not masked: %.80q", first)
	}
}

// The latest verification feedback stays verbatim however old it is.
func TestMaskKeepsTheLatestVerification(t *testing.T) {
	files, reads := manyReads()
	files["n.txt"] = "1\n"
	turns := append([]turn{say(10, "finish", args{"summary": "premature"})}, reads[:30]...)
	turns = append(turns, say(10, "finish", args{"summary": "again"}))
	f := newFixture(t, files, map[string][]turn{"": turns})
	c := goal("make it 2")
	c.Budget.Steps = 40
	c.Verify.Checks = []contract.Check{{Name: "two", Shell: "grep -qx 2 n.txt"}}
	f.run(t, c)
	reqs := f.prov.requests()
	if len(reqs) < 32 {
		t.Fatalf("%d requests", len(reqs))
	}
	feedback := reqs[31].Messages[2].ToolResults[0].Content
	if strings.HasPrefix(feedback, "[result hidden") || !strings.Contains(feedback, "two") {
		t.Errorf("the verification feedback was masked: %.200q", feedback)
	}
	if r := reqs[31].Messages[4].ToolResults[0].Content; !strings.HasPrefix(r, "[result hidden") {
		t.Errorf("an old read is not masked: %.80q", r)
	}
}

func TestStubNamesTheCall(t *testing.T) {
	tests := []struct {
		call model.ToolCall
		res  model.ToolResult
		want string
	}{
		{model.ToolCall{Name: "read_file", Arguments: json.RawMessage(`{"path":"stats/stats.go","offset":10}`)},
			model.ToolResult{Content: "a\nb\n"}, "read_file stats/stats.go → lines 10–11, 4 B"},
		// a partial window: its footer is not a line of the file, and the
		// stub says how long the file is.
		{model.ToolCall{Name: "read_file", Arguments: json.RawMessage(`{"path":"big.go"}`)},
			model.ToolResult{Content: "     1\ta\n     2\tb\n[lines 1–2 of 4,073; continue with offset=3]\n"}, "read_file big.go → lines 1–2 of 4073, "},
		{model.ToolCall{Name: "grep", Arguments: json.RawMessage(`{"pattern":"err"}`)},
			model.ToolResult{Content: strings.Repeat("x.go:1:err\n", 200)}, `grep "err" → 200 lines, 2.1 KB`},
		{model.ToolCall{Name: "edit_file", Arguments: json.RawMessage(`{"path":"a.go"}`)},
			model.ToolResult{Content: "old text not found in a.go\nmore", IsError: true}, `edit_file a.go → error "old text not found in a.go"`},
	}
	for _, tt := range tests {
		if got := stubText(tt.call, tt.res); !strings.Contains(got, tt.want) {
			t.Errorf("stub %q, want it to contain %q", got, tt.want)
		}
	}
}

// With NoMasking (the user config's `harness.masking: false`) the same
// run sends every old result whole: the control is
// TestMaskLeavesTheStoredTranscriptWhole, where it is a stub.
func TestNoMaskingSendsOldResultsWhole(t *testing.T) {
	files, turns := manyReads()
	f := newFixture(t, files, map[string][]turn{"": turns})
	f.h.opts.NoMasking = true
	c := goal("read")
	c.Budget.Steps = 40
	f.run(t, c)
	last := f.prov.requests()[30]
	if first := last.Messages[2].ToolResults[0].Content; !strings.Contains(first, "file 00 holds") {
		t.Errorf("with masking off the first result was not sent whole: %.80q", first)
	}
}
