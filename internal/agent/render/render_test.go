package render

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/ioh-lsp/ioh-lsp/internal/agent/event"
)

func decoded(t *testing.T, line string) event.Event {
	t.Helper()
	var e event.Event
	if err := json.Unmarshal([]byte(line), &e); err != nil {
		t.Fatal(err)
	}
	return e
}

// The text renderings show every field as the JSON Lines hold it, one
// line per event; the markdown one groups events by step.
func TestLineAndMarkdown(t *testing.T) {
	call := decoded(t, `{"arguments":"{\"path\":\"a.go\"}","id":"c1","run":"r-1","step":2,"time":"2026-11-30T16:00:00.5Z","tool":"read_file","type":"tool_call"}`)
	if got, want := Line(call), `16:00:00.500 r-1 step 2 tool_call     arguments="{\"path\":\"a.go\"}" id="c1" tool="read_file"`; got != want {
		t.Errorf("Line:\n got %s\nwant %s", got, want)
	}
	turn := decoded(t, `{"cache_read_tokens":0,"cache_write_tokens":0,"cost_source":"unknown","cost_usd":null,"input_tokens":1,"model":"m","output_tokens":1,"provider":"p","run":"r-1","step":1,"text":"two\nlines","time":"2026-11-30T16:00:00Z","tool_calls":1,"type":"model_turn"}`)
	md := Markdown([]event.Event{turn, call, call})
	if strings.Count(md, "## step") != 2 || !strings.Contains(md, "- **model_turn**: cache_read_tokens=0 ") ||
		!strings.Contains(md, `cost_usd=null`) || !strings.Contains(md, `text="two\nlines"`) || strings.Count(md, "- **tool_call**") != 2 {
		t.Errorf("markdown:\n%s", md)
	}
	long := event.Event{Run: "r", Type: event.TypeWarning, Payload: &event.Warning{Message: strings.Repeat("é", 300)}}
	if f := FieldsText(long, 161); !strings.HasSuffix(f, "…") || len(f) > len("message=")+161+len("…") {
		t.Errorf("a long field is not cut on a character boundary: %q", f)
	}
}

// Headline: what a person watching a run reads on stderr.
func TestHeadline(t *testing.T) {
	for _, c := range []struct{ line, want string }{
		{`{"attempt":2,"class":"server","delay_ms":10,"error":"503 busy","model":"m","next":"","provider":"p","run":"r","step":1,"time":"2026-11-30T16:00:00Z","type":"retry"}`, "retry: retrying in 10 ms (attempt 3, server): 503 busy"},
		{`{"attempt":1,"class":"rate_limited","delay_ms":2000,"error":"429 slow down","model":"m","next":"","provider":"p","run":"r","step":1,"time":"2026-11-30T16:00:00Z","type":"retry"}`, "retry: retrying in 2.0 s (attempt 2, rate_limited): 429 slow down"},
		{`{"attempt":3,"class":"server","delay_ms":0,"error":"503 busy","model":"m","next":"openrouter","provider":"anthropic","run":"r","step":1,"time":"2026-11-30T16:00:00Z","type":"retry"}`, "retry: anthropic failed (attempt 3, server): 503 busy; falling back to openrouter"},
		{`{"action":"compacted transcript","class":"context_overflow","run":"r","step":1,"time":"2026-11-30T16:00:00Z","type":"retry"}`, "retry: context_overflow compacted transcript"},
		{`{"act":"write","effect":"deny","layer":"builtin","rule":"deny write .git/**","run":"r","step":1,"target":".git/config","time":"2026-11-30T16:00:00Z","tool":"write_file","type":"policy"}`, "  policy: deny write .git/config (layer builtin deny write .git/**)"},
		{`{"act":"read","effect":"allow","layer":"default","rule":"","run":"r","step":1,"target":"a","time":"2026-11-30T16:00:00Z","tool":"read_file","type":"policy"}`, ""},
		{`{"backend":"linux","check":"unit","duration_ms":1,"evidence":"exit code only","exit_code":1,"locations":null,"passed":false,"phase":"green","problems":["no test ran"],"run":"r","step":1,"time":"2026-11-30T16:00:00Z","type":"verification"}`, "verify: unit (green) failed [exit code only]: no test ran"},
		{`{"bytes":3,"content":"bad\nmore","id":"c","is_error":true,"run":"r-2","parent":"r-1","step":1,"time":"2026-11-30T16:00:00Z","tool":"grep","type":"tool_result"}`, "  [r-2]   ! grep: bad"},
		{`{"outcome":"unverified","cost_usd":0,"parent":"r-1","run":"r-2","step":1,"steps":1,"time":"2026-11-30T16:00:00Z","tokens":1,"type":"outcome"}`, "  [r-2] sub-agent ended: unverified"},
		{`{"allowed":true,"bytes_down":3145728,"bytes_up":512,"duration_ms":40,"host":"proxy.golang.org","layer":"user","port":443,"rule":"proxy.golang.org:443","run":"r","step":2,"time":"2026-11-30T16:00:00Z","type":"net_conn"}`, "  network: proxy.golang.org:443 allowed (proxy.golang.org:443, user), 512 B up, 3.0 MiB down"},
		{`{"outcome":"applied","cost_usd":0,"run":"r-1","step":1,"steps":1,"time":"2026-11-30T16:00:00Z","tokens":1,"type":"outcome"}`, ""},
	} {
		if got := Headline(decoded(t, c.line)); got != c.want {
			t.Errorf("%s:\n got %q\nwant %q", c.line, got, c.want)
		}
	}
}
