package replay

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ioh-lsp/ioh-lsp/internal/agent/model"
)

const spec = `{"version": 1,
 "turns": [
   {"text": "Looking at the parser.",
    "tool_calls": [{"name": "grep", "arguments": {"pattern": "func ParseDuration"}}],
    "usage": {"input_tokens": 1200, "output_tokens": 40}},
   {"tool_calls": [{"name": "edit_file", "arguments": {"path": "a.go", "old": "x", "new": "y"}}, {"name": "list_dir"}]},
   {"tool_calls": [{"name": "finish", "arguments": {"summary": "done"}}]}
 ],
 "children": {"write the tests": [{"text": "child done", "tool_calls": [{"name": "finish", "arguments": {"summary": "ok"}}]}]}}`

// after returns a request whose transcript holds n assistant turns.
func after(n int, agent string) *model.Request {
	req := &model.Request{Agent: agent, Messages: []model.Message{{Role: model.RoleUser, Text: "go"}}}
	for i := 0; i < n; i++ {
		req.Messages = append(req.Messages,
			model.Message{Role: model.RoleAssistant, Text: "t"},
			model.Message{Role: model.RoleUser, ToolResults: []model.ToolResult{{CallID: "x", Content: "ok"}}})
	}
	return req
}

func TestReplay(t *testing.T) {
	c, err := Parse([]byte(spec))
	if err != nil {
		t.Fatal(err)
	}
	p := New(c)
	tests := []struct {
		name string
		req  *model.Request
		want *model.Response
	}{
		{"first turn", after(0, ""), &model.Response{
			Text:       "Looking at the parser.",
			ToolCalls:  []model.ToolCall{{ID: "replay_0_0", Name: "grep", Arguments: json.RawMessage(`{"pattern":"func ParseDuration"}`)}},
			Usage:      model.Usage{InputTokens: 1200, OutputTokens: 40},
			StopReason: "tool_use", Provider: "replay", Model: "replay",
		}},
		{"second turn, resumed from a transcript", after(1, ""), &model.Response{
			ToolCalls: []model.ToolCall{
				{ID: "replay_1_0", Name: "edit_file", Arguments: json.RawMessage(`{"path":"a.go","old":"x","new":"y"}`)},
				{ID: "replay_1_1", Name: "list_dir", Arguments: json.RawMessage(`{}`)},
			},
			StopReason: "tool_use", Provider: "replay", Model: "replay",
		}},
		{"child agent", after(0, "write the tests"), &model.Response{
			Text:       "child done",
			ToolCalls:  []model.ToolCall{{ID: "replay_0_0", Name: "finish", Arguments: json.RawMessage(`{"summary":"ok"}`)}},
			StopReason: "tool_use", Provider: "replay", Model: "replay",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := p.Complete(context.Background(), tt.req)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(got, tt.want); diff != "" {
				t.Errorf("(-got +want):\n%s", diff)
			}
			again, _ := p.Complete(context.Background(), tt.req)
			if diff := cmp.Diff(again, got); diff != "" {
				t.Errorf("replay is not deterministic (-again +first):\n%s", diff)
			}
		})
	}
}

func TestReplayExhausted(t *testing.T) {
	c, err := Parse([]byte(spec))
	if err != nil {
		t.Fatal(err)
	}
	p := New(c)
	tests := []struct {
		name string
		req  *model.Request
		want string
	}{
		{"root out of turns", after(3, ""), "replay: exhausted: cassette ran out of turns: turns has 3, the agent asked for turn 4"},
		{"child out of turns", after(1, "write the tests"), `replay: exhausted: cassette ran out of turns: children["write the tests"] has 1, the agent asked for turn 2`},
		{"unknown child", after(0, "something else"), `replay: exhausted: cassette has no turns for sub-agent "something else"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := p.Complete(context.Background(), tt.req)
			if model.ClassOf(err) != model.ClassExhausted {
				t.Errorf("class = %s, want exhausted", model.ClassOf(err))
			}
			if err == nil || err.Error() != tt.want {
				t.Errorf("error = %v, want %s", err, tt.want)
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct{ name, src, want string }{
		{"not json", `{`, "decode: the cassette ends before its object does"},
		{"not json at all", `secret`, "decode: not valid JSON at byte 1"},
		{"wrong type", `{"version": "s3cret"}`, "decode: a value of the wrong type at byte 20: want int"},
		{"wrong version", `{"version": 2, "turns": []}`, "unsupported version 2 (want 1)"},
		{"unknown field", `{"version": 1, "turns": [{"txt": "x"}]}`, "decode: not a cassette object (an unknown field or a wrong shape near byte 39)"},
		{"call without name", `{"version": 1, "turns": [{"tool_calls": [{"arguments": {}}]}]}`, "turns[0].tool_calls[0]: missing name"},
		{"arguments not an object", `{"version": 1, "turns": [{"tool_calls": [{"name": "x", "arguments": [1]}]}]}`, "turns[0].tool_calls[0]: arguments must be a JSON object"},
		{"child arguments", `{"version": 1, "turns": [], "children": {"g": [{"tool_calls": [{"name": "x", "arguments": "s"}]}]}}`, `children["g"][0].tool_calls[0]: arguments must be a JSON object`},
		{"trailing data", `{"version": 1, "turns": []} {}`, "decode: trailing data after the cassette object"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(tt.src))
			if err == nil || err.Error() != tt.want {
				t.Errorf("Parse error = %v, want %s", err, tt.want)
			}
		})
	}
}

// compactJSON compares raw JSON by content, not layout.
var compactJSON = cmp.Transformer("compact", func(r json.RawMessage) string {
	var b bytes.Buffer
	if err := json.Compact(&b, r); err != nil {
		return string(r)
	}
	return b.String()
})

func TestSaveLoad(t *testing.T) {
	c, err := Parse([]byte(spec))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "c.json")
	if err := c.Save(path); err != nil {
		t.Fatal(err)
	}
	got, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(got, c, compactJSON); diff != "" {
		t.Errorf("round trip (-got +want):\n%s", diff)
	}
	entries, _ := os.ReadDir(filepath.Dir(path))
	if len(entries) != 1 {
		t.Errorf("Save left %d files, want only the cassette", len(entries))
	}
	if _, err := Load(filepath.Join(t.TempDir(), "none.json")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Load(missing) = %v, want ErrNotExist", err)
	}
	if err := os.WriteFile(path, []byte(`{"version": 3}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(path); err == nil || !strings.Contains(err.Error(), path) {
		t.Errorf("Load(bad) = %v, want an error naming the file", err)
	}
}

// A replayed turn's text streams in a few pieces that add up to it.
func TestReplayStreamsText(t *testing.T) {
	text := "I will fix the parser by handling the empty input first."
	p := New(&Cassette{Turns: []Turn{{Text: text}}})
	var got []string
	ctx := model.WithTextDelta(context.Background(), func(s string) { got = append(got, s) })
	resp, err := p.Complete(ctx, after(0, ""))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) < 2 || len(got) > streamPieces || strings.Join(got, "") != text || resp.Text != text {
		t.Errorf("pieces %q of %q", got, text)
	}
	for _, s := range []string{"", "oneword", "a b"} {
		if got := strings.Join(pieces(s, streamPieces), ""); got != s {
			t.Errorf("pieces of %q add up to %q", s, got)
		}
	}
}
