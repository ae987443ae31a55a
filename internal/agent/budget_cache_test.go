package agent

import (
	"fmt"
	"testing"

	"github.com/ioh-lsp/ioh-lsp/internal/agent/event"
)

// A 40-step run that re-reads a 20k-token cached prefix at every step
// (800k cache reads in all) does not stop on a 100k token budget: cache
// reads are reported beside the counted tokens, not in them.
func TestTokenBudgetLeavesOutCacheReads(t *testing.T) {
	var turns []turn
	for i := 0; i < 39; i++ {
		tr := say(500, "write_file", args{"path": "a.txt", "content": fmt.Sprint(i)})
		tr.resp.Usage.CacheReadTokens = 20_000
		turns = append(turns, tr)
	}
	fin := say(500, "finish", args{"summary": "done"})
	fin.resp.Usage.CacheReadTokens = 20_000
	turns = append(turns, fin)
	f := newFixture(t, map[string]string{"a.txt": "a"}, map[string][]turn{"": turns})
	c := goal("forty steps")
	c.Budget.Steps, c.Budget.Tokens = 40, 100_000
	res := f.run(t, c)
	if res.Outcome != OutcomeApplied || res.Steps != 40 {
		t.Fatalf("%s after %d steps (%v), want the run to finish", res.Outcome, res.Steps, res.Err)
	}
	if want := int64(40 * 550); res.Usage.Total() != want || res.Usage.CacheReadTokens != 800_000 {
		t.Errorf("counted %d tokens, %d cache reads; want %d and 800000", res.Usage.Total(), res.Usage.CacheReadTokens, want)
	}
	var last *event.Budget
	for _, e := range f.sink.ev {
		if b, ok := e.Payload.(*event.Budget); ok {
			last = b
		}
	}
	if last == nil || last.RunCacheReadTokens != 800_000 || last.RunTokens != 40*550 {
		t.Errorf("last budget event %+v, want run_tokens 22000 and run_cache_read_tokens 800000", last)
	}
}
