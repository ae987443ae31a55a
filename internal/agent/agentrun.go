package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/ioh-lsp/ioh-lsp/internal/agent/contract"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/event"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/model"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/policy"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/tools"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/trace"
	"github.com/ioh-lsp/ioh-lsp/internal/workspace"
)

// agentRun is one agent of a run tree (the root or a sub-agent) with the
// state its loop mutates. It lives on its run's goroutine only, except the
// change set and ledger, which are safe for concurrent use.
type agentRun struct {
	h      *Harness
	id     string
	parent string
	rootID string
	c      *contract.Contract
	st     *runState

	base     *policy.Policy // layers up to the task layer
	pol      *policy.Policy // base plus remembered answers
	cs       *workspace.ChangeSet
	csBase   []workspace.Change // a sub-agent's: the parent's changes it started from
	provider model.Provider
	targets  []model.Target // the provider and models a call may reach
	tools    map[string]tools.Tool
	system   string
	msgs     []model.Message
	totals   trace.Totals
	started  time.Time // first start, spans crashes
	deadline time.Time // zero: no wall budget
	ledger   *Ledger
	tree     *tree
	sink     event.Sink
	lastFP   string // change-set fingerprint at the last commit
	slot     slotState
	red      redCache // red-phase check runs, reused by later finish calls
	mask     maskPolicy
	// instrDirs are the directories whose project instructions apply
	// (a sub-agent's include its parent's); instrFiles what was read.
	instrDirs  []string
	instrFiles []event.InstructionFile
	orient     *string // the first message's orientation, once built
	cached     int64   // tokens the last call's provider read or wrote in its cache

	retryMu sync.Mutex
	retries []event.Event // reported during a model call, stored with its step
	stream  *textStream   // the model call's streamed text, while it runs
	net     *netAccess    // the run's network proxy and its judge (netaccess.go)
}

// reportRetry traces a provider's failed attempt: emitted now, stored
// with the step the call belongs to.
func (a *agentRun) reportRetry(r RetryEvent) {
	if a.id == "" { // the provider is being built
		return
	}
	e := a.event(&event.Retry{Class: string(r.Class), RetryAttempt: &event.RetryAttempt{Provider: r.Provider, Model: r.Model,
		Attempt: r.Attempt, Error: a.h.redact.String(r.Err), DelayMS: r.Delay.Milliseconds(), Next: r.Next}})
	a.retryMu.Lock()
	a.retries = append(a.retries, e)
	stream := a.stream
	a.retryMu.Unlock()
	if stream != nil {
		stream.retry()
	}
	a.emit(e)
}

// takeRetries returns and clears the retry events reported so far.
func (a *agentRun) takeRetries() []event.Event {
	a.retryMu.Lock()
	defer a.retryMu.Unlock()
	out := a.retries
	a.retries = nil
	return out
}

// storeRetries appends the retry events reported so far to the trace
// (a model call failed, so no step will carry them).
func (a *agentRun) storeRetries(ctx context.Context) {
	evs := a.takeRetries()
	if len(evs) == 0 {
		return
	}
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if err := a.h.opts.Store.AppendEvents(cctx, evs...); err != nil {
		a.h.log.Warn("store retry events", "run", a.id, "err", err)
	}
}

// policyFor builds the policy of a contract over the harness's layers: the
// contract's protected paths (verify.protect and the contract file itself)
// in a built-in layer of their own, which no grant lifts, then the task
// layer with the contract's rules (narrowing only) and its write scope.
func (h *Harness) policyFor(c *contract.Contract, parent *policy.Policy) (*policy.Policy, error) {
	if err := policy.Narrowing(c.Policy.Rules); err != nil {
		return nil, fmt.Errorf("task policy: %w", err)
	}
	base := parent
	if base == nil {
		var err error
		if base, err = policy.New(h.opts.Layers...); err != nil {
			return nil, err
		}
	}
	protect := append([]string(nil), c.Verify.Protect...)
	if rel := h.contractRel(c.Path); rel != "" {
		protect = append(protect, rel)
	}
	if rules := policy.ProtectRules(protect); len(rules) > 0 {
		p, err := base.With(policy.LayerRules{Layer: policy.LayerBuiltin, Rules: rules})
		if err != nil {
			return nil, err
		}
		base = p
	}
	task := policy.LayerRules{Layer: policy.LayerTask, Rules: append([]policy.Rule(nil), c.Policy.Rules...)}
	task.Rules = append(task.Rules, policy.ScopeRule(c.Scope.Write).Rules...)
	return base.With(task)
}

// contractRel is the contract file's workspace-relative path, "" when it
// is inline or outside the workspace.
func (h *Harness) contractRel(path string) string {
	if path == "" {
		return ""
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return ""
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		abs = real
	}
	rel, err := filepath.Rel(h.opts.Root.Dir(), abs)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return ""
	}
	return filepath.ToSlash(rel)
}

func (a *agentRun) contractRel() string { return a.h.contractRel(a.st.ContractPath) }

// newRoot creates a root run's row and state.
func (h *Harness) newRoot(ctx context.Context, c *contract.Contract) (*agentRun, error) {
	if c == nil || strings.TrimSpace(c.Goal) == "" {
		return nil, fmt.Errorf("start run: %w", configError{errors.New("contract has no goal")})
	}
	var warnings []string
	if h.opts.Prepare != nil {
		cp := *c
		w, err := h.opts.Prepare(&cp)
		if err != nil {
			return nil, fmt.Errorf("start run: %w", configError{err})
		}
		c, warnings = &cp, w
	}
	if h.opts.Model != nil {
		cp := *c
		cp.Model = h.opts.Model(cp.Model)
		c = &cp
	}
	// A credential in a configured URL (base_url's password, ?api_key=)
	// is a secret from here on: never stored, printed or sent.
	cj, _ := json.Marshal(c)
	h.AddConfigured(cj)
	base, err := h.policyFor(c, nil)
	if err != nil {
		return nil, fmt.Errorf("start run: %w", configError{err})
	}
	a0 := &agentRun{h: h}
	prov, err := h.opts.Providers(c, a0.reportRetry)
	if err != nil {
		return nil, fmt.Errorf("start run: %w", configError{err})
	}
	a0.targets = targetsOf(prov, c)
	written := c.Budget
	if err := h.checkPriced(c, a0.targets); err != nil {
		return nil, fmt.Errorf("start run: %w", configError{err})
	}
	now := time.Now()
	cpath := c.Path
	if cpath != "" {
		if abs, err := filepath.Abs(cpath); err == nil {
			cpath = abs
		}
	}
	a := a0
	a.id, a.c, a.st = newID("r-"), c, &runState{ContractPath: cpath}
	if c.Budget != written {
		// checkPriced dropped the dollar limit nobody wrote: the stored
		// contract has it, so the state keeps the budget a resume runs under.
		b := c.Budget
		a.st.Budget = &b
	}
	a.base, a.pol, a.cs, a.provider = base, base, workspace.NewChangeSet(h.opts.Root), prov
	a.started, a.ledger = now, NewLedger(c.Budget.Tokens, c.Budget.CostUSD)
	a.rootID = a.id
	a.tree = newTree(c.Agents)
	a.setup(ctx)
	evs := []event.Event{a.event(withTraceContext(ctx, &event.RunStarted{Goal: c.Goal, RunModel: &event.RunModel{Provider: prov.Name(), Model: c.Model.Name},
		RunInstructions: a.instructionsEvent()}))}
	for _, w := range warnings {
		evs = append(evs, a.event(&event.Warning{Message: w}))
	}
	for i := range evs {
		evs[i].Step = 0
	}
	// The row is created with its lease: a run is never seen unleased
	// (and so interrupted) while it starts.
	row := &trace.RunRow{ID: a.id, Root: a.id, Goal: c.Goal, Contract: cj, Outcome: string(OutcomeRunning), FirstStarted: now, State: a.st.encode(),
		LeaseOwner: h.opts.Owner, LeaseExpiry: time.Now().Add(h.opts.LeaseTTL)}
	if err := h.opts.Store.CreateRun(ctx, row, evs...); err != nil {
		return nil, fmt.Errorf("start run: %w", err)
	}
	for _, e := range evs {
		a.emit(e)
	}
	return a, nil
}

// setup derives what follows from the contract and state: deadline, tools,
// system prompt, the first user message.
func (a *agentRun) setup(ctx context.Context) {
	if a.c.Budget.Wall > 0 {
		a.deadline = a.started.Add(a.c.Budget.Wall)
	}
	var sp tools.Spawner
	if a.st.Depth < a.tree.maxDepth {
		sp = spawner{a}
	}
	a.tools = tools.Set(tools.Env{Changes: a.cs, Sandbox: a.sandboxFor("run"), Reads: a.checkRead}, sp)
	if a.h.opts.MCP != nil {
		extra, _ := a.h.opts.MCP.Tools(ctx, a.pol.Check)
		for _, t := range extra {
			if _, taken := a.tools[t.Spec().Name]; !taken {
				a.tools[t.Spec().Name] = t
			}
		}
	}
	if a.exploring() {
		a.tools = exploreTools(a.tools)
	}
	a.mask = maskPolicyFor(a.c.Model.Name)
	if a.h.opts.NoMasking {
		a.mask = maskPolicy{threshold: math.MaxInt64, limit: math.MaxInt64}
	}
	a.system = a.h.redact.String(a.systemPrompt(ctx))
	if len(a.msgs) == 0 || a.msgs[0].Role != model.RoleUser {
		// A resumed run's steps hold what came after the first message.
		first := model.Message{Role: model.RoleUser, Text: a.h.redact.String(a.firstMessage(ctx))}
		a.msgs = append([]model.Message{first}, a.msgs...)
	}
	a.sink = a.h.opts.Events
}

// restore rebuilds a root run from its row and committed steps.
func (h *Harness) restore(ctx context.Context, row *trace.RunRow) (*agentRun, error) {
	var c contract.Contract
	if err := json.Unmarshal(h.unredactContract(row.Contract), &c); err != nil {
		return nil, fmt.Errorf("decode stored contract: %w", err)
	}
	st, err := decodeState(row.State)
	if err != nil {
		return nil, err
	}
	c.Path = st.ContractPath
	if st.Budget != nil {
		c.Budget = *st.Budget
	}
	if h.opts.Model != nil {
		c.Model = h.opts.Model(c.Model)
	}
	if cj, err := json.Marshal(&c); err == nil {
		h.AddConfigured(cj)
	}
	base, err := h.policyFor(&c, nil)
	if err != nil {
		return nil, err
	}
	a := &agentRun{h: h}
	prov, err := h.opts.Providers(&c, a.reportRetry)
	if err != nil {
		return nil, configError{err}
	}
	a.targets = targetsOf(prov, &c)
	if err := h.checkPriced(&c, a.targets); err != nil {
		return nil, configError{err}
	}
	if err := h.opts.Store.Acquire(ctx, row.ID, h.opts.Owner, h.opts.LeaseTTL); err != nil {
		return nil, err
	}
	cs := workspace.NewChangeSet(h.opts.Root)
	if len(row.Changes) > 0 {
		if cs, err = h.unmarshalChanges(row.Changes); err != nil {
			// Let a resume with the environment fixed take the run at once.
			h.opts.Store.Release(context.WithoutCancel(ctx), row.ID, h.opts.Owner)
			return nil, fmt.Errorf("restore change set: %w", err)
		}
	}
	a.id, a.rootID, a.c, a.st, a.base, a.cs, a.provider = row.ID, row.ID, &c, st, base, cs, prov
	a.started, a.totals, a.ledger = row.FirstStarted, row.Totals, NewLedger(c.Budget.Tokens, c.Budget.CostUSD)
	if a.pol, err = a.withRemembered(); err != nil {
		return nil, err
	}
	// The user's messages are added once the first message is in place
	// (restoreTurns, in resume).
	if a.msgs, err = h.stepMessages(ctx, row.ID); err != nil {
		return nil, err
	}
	// The whole tree's committed spend counts against the ledger; runs of
	// the tree left in flight by the crash are closed as cancelled.
	treeRows, err := h.opts.Store.Tree(ctx, row.ID)
	if err != nil {
		return nil, err
	}
	a.tree = newTree(c.Agents)
	for _, r := range treeRows {
		a.ledger.Charge(r.Totals.Tokens(), r.Totals.CostUSD)
		if rst, err := decodeState(r.State); err == nil {
			a.ledger.ChargeUnpriced(rst.Unpriced)
		}
		if r.ID == row.ID {
			continue
		}
		a.tree.total++
		if Outcome(r.Outcome) == OutcomeRunning {
			ev := event.New(r.ID, r.Parent, r.Totals.Steps, &event.Outcome{Outcome: string(OutcomeCancelled),
				Steps: r.Totals.Steps, Tokens: r.Totals.Tokens(), CostUSD: r.Totals.CostUSD, Reason: "interrupted; its parent redoes the step"})
			if err := h.opts.Store.SetOutcome(ctx, r.ID, string(OutcomeCancelled), "", "interrupted", nil, ev); err != nil {
				return nil, err
			}
			if h.opts.Events != nil {
				h.opts.Events.Emit(ev) // a listing of the tree's runs sees it end
			}
		}
	}
	a.lastFP = cs.Fingerprint()
	a.setup(ctx)
	return a, nil
}

// withRemembered returns the base policy plus the remembered layer.
func (a *agentRun) withRemembered() (*policy.Policy, error) {
	if len(a.st.Remembered) == 0 {
		return a.base, nil
	}
	return a.base.With(policy.LayerRules{Layer: policy.LayerRemembered, Rules: a.st.Remembered})
}

// event builds an event of this agent in the step being built (the last
// committed step plus one).
func (a *agentRun) event(p event.Payload) event.Event {
	return event.New(a.id, a.parent, a.totals.Steps+1, p)
}

// emit sends e to the sink.
func (a *agentRun) emit(e event.Event) {
	if a.sink != nil {
		a.sink.Emit(e)
	}
}
