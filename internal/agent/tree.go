package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/ioh-lsp/ioh-lsp/internal/agent/contract"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/event"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/tools"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/trace"
	"github.com/ioh-lsp/ioh-lsp/internal/workspace"
)

// tree holds the caps of one run tree: agents in total (the root
// included), depth, and sub-agents working at once. A slot is held by a
// sub-agent while it works and given back while it waits for its own
// sub-agents, so waiting parents never starve their children; when every
// slot is taken a spawn queues.
type tree struct {
	maxTotal, maxDepth int
	slots              chan struct{}

	mu      sync.Mutex
	total   int
	working int
	peak    int
}

// newTree takes the caps of c as the contract parser filled them (a
// max_depth of 0, written, means no sub-agents). A contract built in code
// with no caps at all gets the contract defaults; a total or concurrency
// cap left zero (never parsed: both are at least 1) gets its default.
func newTree(c contract.Agents) *tree {
	if c == (contract.Agents{}) {
		c = contract.DefaultAgents()
	}
	t := &tree{maxTotal: c.MaxTotal, maxDepth: max(c.MaxDepth, 0), total: 1}
	if t.maxTotal <= 0 {
		t.maxTotal = contract.DefaultMaxTotal
	}
	n := c.MaxConcurrent
	if n <= 0 {
		n = contract.DefaultMaxConcurrent
	}
	t.slots = make(chan struct{}, n)
	return t
}

// admit counts a new agent at depth, or says which cap refuses it.
func (t *tree) admit(depth int) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if depth > t.maxDepth {
		return fmt.Errorf("the sub-agent depth cap (%d) is reached", t.maxDepth)
	}
	if t.total >= t.maxTotal {
		return fmt.Errorf("the cap of %d agents in this run (the root included) is reached", t.maxTotal)
	}
	t.total++
	return nil
}

func (t *tree) acquire(ctx context.Context) error {
	select {
	case t.slots <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	t.mu.Lock()
	t.working++
	t.peak = max(t.peak, t.working)
	t.mu.Unlock()
	return nil
}

func (t *tree) release() {
	t.mu.Lock()
	t.working--
	t.mu.Unlock()
	<-t.slots
}

// slotState tracks whether an agent holds a working slot and how many of
// its spawns are in flight.
type slotState struct {
	mu      sync.Mutex
	holds   bool
	waiting int
}

// spawner is the harness side of spawn_agent for one agent.
type spawner struct{ a *agentRun }

// Spawn runs a sub-agent to its end and reports its outcome to the model.
func (s spawner) Spawn(ctx context.Context, p tools.SpawnParams) (tools.Result, error) {
	a := s.a
	if err := a.tree.admit(a.st.Depth + 1); err != nil {
		return tools.Errorf("spawn_agent refused: %v", err), nil
	}
	child, err := a.newChild(ctx, p)
	if err != nil {
		if ctx.Err() != nil {
			return tools.Result{}, ctx.Err()
		}
		if errors.Is(err, trace.ErrStorage) {
			return tools.Result{}, err // the parent's run is interrupted too
		}
		return tools.Errorf("spawn_agent: %v", err), nil
	}
	a.leaveSlot()
	defer a.enterSlot(ctx)
	if err := a.tree.acquire(ctx); err != nil {
		child.conclude(ctx, end{OutcomeCancelled, err})
		return tools.Result{}, err
	}
	child.slot.holds = true
	res := child.drive(ctx)
	child.slot.mu.Lock()
	if child.slot.holds {
		child.slot.holds = false
		a.tree.release()
	}
	child.slot.mu.Unlock()
	if err := ctx.Err(); err != nil {
		// The parent is being cancelled: its step ends unanswered.
		return tools.Result{}, err
	}
	if res.Outcome == OutcomeInterrupted {
		// The trace failed under the sub-agent: the parent stops at its
		// last committed step too, and resume redoes this spawn.
		return tools.Result{}, res.Err
	}

	var b strings.Builder
	fmt.Fprintf(&b, "sub-agent %s (%q) ended: %s", child.id, p.Goal, res.Outcome)
	if res.Summary != "" {
		label := "summary"
		if child.exploring() {
			label = "findings"
		}
		fmt.Fprintf(&b, "\n%s: %s", label, cutAtLine(res.Summary, maxChildReport))
		if len(res.Summary) > maxChildReport {
			fmt.Fprintf(&b, "\n[%d more bytes of the %s not shown: ioh-lsp trace %s has them]", len(res.Summary)-len(cutAtLine(res.Summary, maxChildReport)), label, child.id)
		}
	}
	if res.Err != nil && res.Outcome != OutcomeUnverified {
		fmt.Fprintf(&b, "\nreason: %v", res.Err)
	}
	isErr := res.Outcome != OutcomeUnverified
	if child.exploring() {
		isErr = res.Outcome != OutcomeUnverified && res.Outcome != OutcomeApplied
	}
	var wrote []string
	if !isErr && child.cs.Len() > 0 {
		if err := a.cs.Merge(child.cs); err != nil {
			isErr = true
			fmt.Fprintf(&b, "\nits changes were NOT merged: %v", err)
		} else {
			fmt.Fprintf(&b, "\nmerged its changes to: %s", strings.Join(changedPaths(child.cs.Changes()), ", "))
			wrote = changedSince(child.csBase, child.cs.Changes())
		}
	} else if isErr {
		b.WriteString("\nits changes were not merged")
	}
	return tools.Result{Content: b.String(), IsError: isErr, Wrote: wrote}, nil
}

// changedSince lists the paths whose pending change differs between
// before and after (both sorted by path, as ChangeSet.Changes returns
// them), with a rename's source: the files a sub-agent itself changed
// on top of the change set it was given.
func changedSince(before, after []workspace.Change) []string {
	old := make(map[string]workspace.Change, len(before))
	for _, c := range before {
		old[c.Path] = c
	}
	seen := map[string]bool{}
	var out []string
	add := func(p string) {
		if p != "" && !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	for _, c := range after {
		o, ok := old[c.Path]
		delete(old, c.Path)
		if ok && o.Op == c.Op && o.From == c.From && o.Mode == c.Mode && bytes.Equal(o.Content, c.Content) {
			continue
		}
		add(c.From)
		add(c.Path)
	}
	for _, c := range before {
		if _, dropped := old[c.Path]; dropped { // the sub-agent undid it
			add(c.Path)
		}
	}
	sort.Strings(out)
	return out
}

// leaveSlot gives back this agent's working slot while it waits on
// sub-agents (the root holds none).
func (a *agentRun) leaveSlot() {
	a.slot.mu.Lock()
	defer a.slot.mu.Unlock()
	a.slot.waiting++
	if a.slot.waiting == 1 && a.slot.holds {
		a.slot.holds = false
		a.tree.release()
	}
}

// enterSlot takes a slot back once the last spawn returns (a sub-agent
// only; a cancelled wait leaves it without one, which ends it anyway).
func (a *agentRun) enterSlot(ctx context.Context) {
	a.slot.mu.Lock()
	defer a.slot.mu.Unlock()
	a.slot.waiting--
	if a.slot.waiting == 0 && a.parent != "" && !a.slot.holds {
		if a.tree.acquire(ctx) == nil {
			a.slot.holds = true
		}
	}
}

// maxChildReport bounds a sub-agent's summary or findings in its
// parent's spawn_agent result.
const maxChildReport = 4 << 10

// childSteps is a sub-agent's default step budget: a quarter of the
// parent's (at least minChildSteps), never more than the parent has
// left; 0 (unlimited) under an unlimited parent.
func (a *agentRun) childSteps() int {
	lim := a.c.Budget.Steps
	if lim <= 0 {
		return 0
	}
	left := max(lim-a.totals.Steps, 1)
	return min(max(lim/4, minChildSteps), left)
}

const minChildSteps = 8

// newChild creates a sub-agent: the parent's policy plus a narrowing
// layer for its scope, a clone of the parent's change set, a share of the
// parent's budget from the tree's ledger, the parent's context files and
// project instructions, and its own run row.
func (a *agentRun) newChild(ctx context.Context, p tools.SpawnParams) (*agentRun, error) {
	c := *a.c
	c.Goal = p.Goal
	c.Scope = contract.Scope{}
	if p.Scope != nil {
		c.Scope.Write = p.Scope.Write
	}
	c.Verify = contract.Verify{Protect: a.c.Verify.Protect}
	c.Policy = contract.Policy{}
	c.Path = a.c.Path
	c.Budget = contract.Budget{Steps: a.childSteps()}
	wall, _ := p.Budget.WallDuration()
	if p.Budget != nil {
		if p.Budget.Steps > 0 {
			c.Budget.Steps = p.Budget.Steps
		}
	}
	pol, err := a.h.policyFor(&c, a.pol)
	if err != nil {
		return nil, err
	}
	var tok int64
	var usd float64
	if p.Budget != nil {
		tok, usd = p.Budget.Tokens, p.Budget.CostUSD
	}
	now := time.Now()
	ch := &agentRun{
		h: a.h, id: newID("r-"), parent: a.id, rootID: a.rootID, c: &c,
		st:   &runState{Agent: p.Goal, Depth: a.st.Depth + 1, ContractPath: a.st.ContractPath, Explore: p.Mode == tools.SpawnExplore},
		base: pol, pol: pol, cs: a.cs.Clone(), csBase: a.cs.Changes(), provider: a.provider, targets: a.targets, started: now,
		ledger: a.ledger.Child(tok, usd), tree: a.tree, instrDirs: a.instrDirs,
	}
	ch.c.Budget.Tokens, ch.c.Budget.CostUSD = ch.ledger.tokens, ch.ledger.cost
	if wall > 0 {
		ch.c.Budget.Wall = wall
	}
	if !a.deadline.IsZero() {
		if left := time.Until(a.deadline); ch.c.Budget.Wall == 0 || left < ch.c.Budget.Wall {
			ch.c.Budget.Wall = max(left, time.Millisecond)
		}
	}
	ch.setup(ctx)
	cj, _ := json.Marshal(&c)
	evs := []event.Event{
		a.event(&event.AgentSpawned{Child: ch.id, Goal: p.Goal, Depth: ch.st.Depth, Scope: c.Scope.Write,
			Tokens: ch.c.Budget.Tokens, CostUSD: ch.c.Budget.CostUSD, Steps: ch.c.Budget.Steps, Mode: exploreMode(ch)}),
		ch.event(&event.RunStarted{Goal: p.Goal, Depth: ch.st.Depth, RunInstructions: ch.instructionsEvent()}),
	}
	row := &trace.RunRow{ID: ch.id, Parent: a.id, Root: a.rootID, Goal: p.Goal, Contract: cj,
		Outcome: string(OutcomeRunning), FirstStarted: now, State: ch.st.encode()}
	if err := a.h.opts.Store.CreateRun(ctx, row, evs...); err != nil {
		return nil, err
	}
	for _, e := range evs {
		a.emit(e)
	}
	return ch, nil
}

// exploring reports a sub-agent in explore mode.
func (a *agentRun) exploring() bool { return a.st.Explore }

// exploreMode is the agent_spawned mode of ch.
func exploreMode(ch *agentRun) string {
	if ch.exploring() {
		return tools.SpawnExplore
	}
	return ""
}

// exploreTools keeps of set the tools an exploring sub-agent has: the
// read-only ones, run (its writes are discarded with its sandbox) and
// finish; no spawn_agent, MCP tools or edits.
func exploreTools(set map[string]tools.Tool) map[string]tools.Tool {
	out := map[string]tools.Tool{}
	for name, t := range set {
		if t.ReadOnly() || name == "run" || name == tools.FinishName {
			out[name] = t
		}
	}
	return out
}
