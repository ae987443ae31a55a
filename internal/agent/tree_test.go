package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ioh-lsp/ioh-lsp/internal/agent/contract"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/model"
)

// treeProvider makes every agent spawn fanout children (in one turn) until
// depth, each leaf write a file of its own, and everyone finish. It
// reports usage no larger than the call's budget allows (as a real model
// bounded by max_tokens would) and tracks how many calls overlap.
type treeProvider struct {
	fanout, depth int
	mu            sync.Mutex
	inflight      int
	peak          int
}

func (p *treeProvider) Name() string { return "tree" }

func (p *treeProvider) Complete(ctx context.Context, req *model.Request) (*model.Response, error) {
	p.mu.Lock()
	p.inflight++
	p.peak = max(p.peak, p.inflight)
	p.mu.Unlock()
	defer func() { p.mu.Lock(); p.inflight--; p.mu.Unlock() }()
	time.Sleep(20 * time.Millisecond) // let calls overlap
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	turns := 0
	for _, m := range req.Messages {
		if m.Role == model.RoleAssistant {
			turns++
		}
	}
	level := strings.Count(req.Agent, "/")
	resp := &model.Response{Usage: model.Usage{InputTokens: estimateInput(req) * 3 / 4, OutputTokens: min(40, int64(req.MaxTokens))}}
	call := func(name string, a any) {
		b, _ := json.Marshal(a)
		resp.ToolCalls = append(resp.ToolCalls, model.ToolCall{Name: name, Arguments: b})
	}
	switch {
	case turns == 0 && level < p.depth:
		for i := 0; i < p.fanout; i++ {
			call("spawn_agent", args{"goal": fmt.Sprintf("%s/%d", req.Agent, i)})
		}
	case turns == 0:
		call("write_file", args{"path": "out/" + strings.ReplaceAll(req.Agent, "/", "_") + ".txt", "content": req.Agent})
	default:
		call("finish", args{"summary": "done " + req.Agent})
	}
	return resp, nil
}

func TestSubAgentTreeHoldsCapsAndLedger(t *testing.T) {
	tests := []struct {
		name      string
		tokens    int64
		minAgents int
	}{
		// Enough for the cap of 100 agents to be what stops the tree.
		{"total cap", 400000, 100},
		// A tight ledger: most agents run out; nobody overdraws.
		{"tight ledger", 40000, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { testTree(t, tt.tokens, tt.minAgents) })
	}
}

func testTree(t *testing.T, ledger int64, minAgents int) {
	before := runtime.NumGoroutine()
	f := newFixture(t, map[string]string{"README": "r"}, nil)
	prov := &treeProvider{fanout: 5, depth: 3}
	h, err := New(Options{Root: f.root, Store: f.store, Approver: f.appr, Sandbox: copySandbox{t},
		Providers: func(*contract.Contract, RetryReporter) (model.Provider, error) { return prov, nil }})
	if err != nil {
		t.Fatal(err)
	}
	c := goal("tree")
	c.Agents = contract.Agents{MaxTotal: 100, MaxDepth: 3, MaxConcurrent: 4}
	c.Budget.Tokens = ledger
	r, err := h.Start(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	res := r.Wait()
	rows, err := f.store.Tree(context.Background(), r.ID())
	if err != nil {
		t.Fatal(err)
	}
	if res.Outcome != OutcomeApplied && res.Outcome != OutcomeBudgetExceeded && res.Outcome != OutcomeUnverified {
		for _, row := range rows[:min(len(rows), 8)] {
			t.Logf("%s parent %s: %s %s %s", row.ID, row.Parent, row.Goal, row.Outcome, row.Error)
		}
		t.Fatalf("outcome %s (%v)", res.Outcome, res.Err)
	}
	if len(rows) > 100 {
		t.Errorf("%d agents, the cap is 100", len(rows))
	}
	var tokens int64
	depth := map[string]int{r.ID(): 0}
	for _, row := range rows {
		tokens += row.Totals.Tokens()
		if row.ID != r.ID() {
			d, ok := depth[row.Parent]
			if !ok {
				t.Fatalf("run %s has unknown parent %q", row.ID, row.Parent)
			}
			depth[row.ID] = d + 1
			if d+1 > 3 {
				t.Errorf("run %s at depth %d", row.ID, d+1)
			}
		}
		if row.Outcome == string(OutcomeRunning) {
			t.Errorf("run %s left running", row.ID)
		}
	}
	if tokens > c.Budget.Tokens {
		t.Errorf("tree spent %d tokens, the ledger holds %d", tokens, c.Budget.Tokens)
	}
	if prov.peak > 4 {
		t.Errorf("%d model calls overlapped, max_concurrent is 4", prov.peak)
	}
	if len(rows) < minAgents {
		t.Errorf("only %d agents ran, want at least %d", len(rows), minAgents)
	}
	t.Logf("%d agents, %d tokens of %d, peak concurrency %d, outcome %s", len(rows), tokens, c.Budget.Tokens, prov.peak, res.Outcome)
	// Every goroutine the run started has ended.
	for i := 0; i < 200 && runtime.NumGoroutine() > before+2; i++ {
		time.Sleep(10 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before+2 {
		buf := make([]byte, 1<<16)
		t.Errorf("%d goroutines left (from %d):\n%s", n, before, buf[:runtime.Stack(buf, true)])
	}
}

func TestLedgerNeverOverdraws(t *testing.T) {
	root := NewLedger(10000, 0)
	var wg sync.WaitGroup
	for i := 0; i < 50; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			l := root.Child(int64(500+i*10), 0)
			for {
				r, err := l.Reserve(120, 0)
				if err != nil {
					return
				}
				r.Settle(100+int64(i%20), 0)
			}
		}(i)
	}
	wg.Wait()
	if spent, _ := root.Spent(); spent > 10000 || root.Overdrawn() {
		t.Errorf("spent %d of 10000", spent)
	}
}

func TestCancelStopsSubtree(t *testing.T) {
	f := newFixture(t, nil, nil)
	started := make(chan struct{})
	var once sync.Once
	prov := providerFunc(func(ctx context.Context, req *model.Request) (*model.Response, error) {
		if req.Agent == "" {
			return say(10, "spawn_agent", args{"goal": "child"}).resp, nil
		}
		once.Do(func() { close(started) })
		<-ctx.Done()
		return nil, ctx.Err()
	})
	h, err := New(Options{Root: f.root, Store: f.store, Providers: func(*contract.Contract, RetryReporter) (model.Provider, error) { return prov, nil }})
	if err != nil {
		t.Fatal(err)
	}
	r, err := h.Start(context.Background(), goal("parent"))
	if err != nil {
		t.Fatal(err)
	}
	<-started
	if !h.Cancel(r.ID()) {
		t.Fatal("Cancel found no run")
	}
	if res := r.Wait(); res.Outcome != OutcomeCancelled {
		t.Errorf("outcome %s", res.Outcome)
	}
	rows, _ := f.store.Tree(context.Background(), r.ID())
	for _, row := range rows {
		if row.Outcome != string(OutcomeCancelled) {
			t.Errorf("run %s (parent %q): %s", row.ID, row.Parent, row.Outcome)
		}
	}
	if len(rows) != 2 {
		t.Errorf("%d runs, want 2", len(rows))
	}
}

type providerFunc func(ctx context.Context, req *model.Request) (*model.Response, error)

func (providerFunc) Name() string { return "func" }
func (f providerFunc) Complete(ctx context.Context, req *model.Request) (*model.Response, error) {
	return f(ctx, req)
}

// A sub-agent writes only inside its scope (within the parent's policy),
// its changes merge into the parent's, and two children changing one file
// differently conflict: the second merge is refused and reported.
func TestSubAgentScopeAndMerge(t *testing.T) {
	f := newFixture(t, map[string]string{"same.txt": "base\n"}, map[string][]turn{
		"": {
			say(10, "spawn_agent", args{"goal": "docs", "scope": args{"write": []string{"docs/**"}}}),
			say(10, "spawn_agent", args{"goal": "one"}, "spawn_agent", args{"goal": "two"}),
			say(10, "finish", args{"summary": "s"}),
		},
		"docs": {
			say(10, "write_file", args{"path": "src/x.go", "content": "x"}, "write_file", args{"path": "docs/a.md", "content": "a"}),
			say(10, "finish", args{"summary": "docs done"}),
		},
		"one": {say(10, "write_file", args{"path": "same.txt", "content": "one\n"}), say(10, "finish", args{"summary": "1"})},
		"two": {say(10, "write_file", args{"path": "same.txt", "content": "two\n"}), say(10, "finish", args{"summary": "2"})},
	})
	res := f.run(t, goal("split"))
	if res.Outcome != OutcomeApplied {
		t.Fatalf("outcome %s (%v)", res.Outcome, res.Err)
	}
	if _, err := os.Stat(filepath.Join(f.dir, "src/x.go")); err == nil {
		t.Error("the docs agent wrote outside its scope")
	}
	if got := f.read(t, "docs/a.md"); got != "a" {
		t.Errorf("docs/a.md = %q", got)
	}
	// The two children ran side by side from one base: whichever merged
	// second conflicts.
	var results []string
	for _, r := range f.prov.requests() {
		if r.Agent == "" && len(r.Messages) == 5 {
			for _, tr := range r.Messages[4].ToolResults {
				results = append(results, tr.Content)
			}
		}
	}
	if len(results) != 2 || strings.Contains(results[0], "NOT merged") == strings.Contains(results[1], "NOT merged") {
		t.Fatalf("want exactly one conflicting child, got %q", results)
	}
	winner := "one\n"
	if strings.Contains(results[0], "NOT merged") {
		winner = "two\n"
	}
	if got := f.read(t, "same.txt"); got != winner {
		t.Errorf("same.txt = %q, want %q (the merged child's)", got, winner)
	}
	rows, _ := f.store.Tree(context.Background(), res.RunID)
	if len(rows) != 4 {
		t.Errorf("%d runs in the tree, want 4", len(rows))
	}
}
