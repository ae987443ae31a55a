package lsp_test

import (
	"context"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"go.lsp.dev/protocol"

	"github.com/ioh-lsp/ioh-lsp/internal/agent"
	"github.com/ioh-lsp/ioh-lsp/internal/lsp"
	"github.com/ioh-lsp/ioh-lsp/internal/lsp/lsptest"
)

// The server acts on the stop reason the run recorded, never on its
// error text, in a server started after the run (it reads it back from
// the trace store): a run its step budget stopped whose error text was
// rewritten still gets the budget-exceeded lens and the question offers
// steps only; a run that ended provider_failed with an error that talks
// of a "step budget" gets no "Continue with a larger budget".
func TestBudgetStopIsTypedNotText(t *testing.T) {
	f := newFixture(t, map[string]string{"a.txt": "a\n", "cassette.json": budgetCassette, "task.ioh.yaml": budgetTask}, lsptest.Config{})
	ctx := f.ctx()
	id := f.start(ctx, "ioh.run", map[string]string{"contract": string(f.editor.URI("task.ioh.yaml"))})
	if msg := f.awaitEnd(ctx, id); !strings.Contains(msg, "budget_exceeded") {
		t.Fatalf("end: %q, want budget_exceeded", msg)
	}
	rewrite := func(outcome agent.Outcome, text string) {
		t.Helper()
		e := f.harness(ctx, nil)
		defer e.Close()
		row, err := e.Store.Run(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if err := e.Store.SetOutcome(ctx, id, string(outcome), row.Summary, text, row.State); err != nil {
			t.Fatal(err)
		}
	}

	// A server that was not there when the run ended.
	var mu sync.Mutex
	var asked [][]string
	restarted := func() *fixture {
		srv := lsp.New(lsp.Options{Logger: slog.New(slog.DiscardHandler), NewHarness: wireFactory(f.state), Version: "test", StateDir: filepath.Join(t.TempDir(), "lsp")})
		cfg := lsptest.Config{Root: f.dir, Hooks: lsptest.Hooks{ShowMessageRequest: func(ctx context.Context, p *protocol.ShowMessageRequestParams) (*protocol.MessageActionItem, error) {
			var titles []string
			for _, a := range p.Actions {
				titles = append(titles, a.Title)
			}
			mu.Lock()
			asked = append(asked, titles)
			mu.Unlock()
			return &protocol.MessageActionItem{Title: "Not now"}, nil
		}}}
		return &fixture{t: t, dir: f.dir, state: f.state, editor: lsptest.Start(t, srv, cfg)}
	}
	continueLens := func(g *fixture) bool {
		t.Helper()
		lenses, err := g.editor.CodeLenses(ctx, "task.ioh.yaml")
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range lenses {
			if strings.Contains(l.Command.Title, "Continue with a larger budget ("+id+")") {
				return true
			}
		}
		return false
	}

	rewrite(agent.OutcomeProviderFailed, "the provider refused: step budget of its plan exceeded")
	if continueLens(restarted()) {
		t.Errorf("a provider_failed run whose error names a step budget got a Continue with a larger budget lens")
	}

	rewrite(agent.OutcomeBudgetExceeded, "it ran out of room")
	g := restarted()
	if !continueLens(g) {
		t.Errorf("the budget stop, its text rewritten: no Continue with a larger budget lens")
	}
	raw, err := g.editor.ExecuteCommand(ctx, "ioh.resume", map[string]any{"runId": id})
	if err != nil || !strings.Contains(string(raw), `"resumed":false`) {
		t.Fatalf("resume without a budget, declined: %s, %v", raw, err)
	}
	mu.Lock()
	defer mu.Unlock()
	want := "+50%: 3 steps|×2: 4 steps|Not now"
	if len(asked) != 1 || strings.Join(asked[0], "|") != want {
		t.Errorf("questions asked %q, want one offering %q: the steps that stopped the run, not every limit", asked, want)
	}
}
