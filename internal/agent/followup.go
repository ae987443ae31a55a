package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/ioh-lsp/ioh-lsp/internal/agent/contract"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/event"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/model"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/trace"
	"github.com/ioh-lsp/ioh-lsp/internal/workspace"
)

// Conversation: a follow-up user turn on a run (Continue).
//
// A follow-up continues the same run when Resume could: its change awaits
// approval (the follow-up's edits add to that change set, and the next
// finish verifies and offers the whole change), or it stopped before it
// finished (cancelled, provider_failed, budget_exceeded, interrupted; its
// change set is kept). A run that is over (applied, rejected, verified,
// unverified, verification_failed, stalled, denied) keeps its outcome, and
// the follow-up starts a new run linked to it: its state names the run it
// follows, its transcript is that run's (and of every run that one
// follows) rebuilt from the trace, and its change set is empty (the
// earlier change was applied or rejected) or the earlier run's unapplied
// change, carried on. Either way the model gets the turn as the user's
// next message, after the earlier turns (masked as any long transcript
// is): a statement of what happened to the earlier change, then the text.
// The trace records each turn as a user_turn event.
//
// Each turn gets the contract's budget afresh, counted from the turn's
// start: a linked run has a ledger of its own; a continued run's limits
// become what it spent so far plus the contract's budget.

// ErrBusy: the run is in flight (its model loop, or another process,
// drives it); a follow-up waits for it to end or cancels it first.
var ErrBusy = errors.New("run is in flight")

// errWithdrawn is the cause that withdraws a change's offer from the
// approver: a follow-up continues the run instead.
var errWithdrawn = errors.New("withdrawn: a follow-up continues the run")

// maxFollows bounds the chain of linked runs a transcript is rebuilt from.
const maxFollows = 100

// userTurn is a user's message added to a restored run (a follow-up, or
// feedback on a rejected change): budget adjusts the stored row before
// restore applies it; take adds the message and returns the event that
// records it.
type userTurn struct {
	budget func(ctx context.Context, row *trace.RunRow) error
	take   func(a *agentRun) event.Event
}

// Continue sends text, the user's follow-up, to run id. The returned run
// is id itself when the run could still go on (its change pending, or
// stopped before it finished), else a new run linked to id (its user_turn
// event names id as `follows`). A run whose change the approver is being
// asked about (an editor's review, an agent panel's permission request) is
// still pending: the offer is withdrawn (answered defer) and the run
// continues. A run in flight is refused (ErrBusy): wait for it to end or
// cancel it. A run waiting for an answer to an act, a sub-agent's run and
// an empty text are ErrConfig errors.
func (h *Harness) Continue(ctx context.Context, id, text string) (*Run, error) {
	text = strings.TrimSpace(text)
	if text == "" {
		return nil, configError{fmt.Errorf("follow up on %s: the message is empty: say what the agent should do next", id)}
	}
	if _, err := h.Withdraw(ctx, id); err != nil {
		return nil, err
	}
	h.mu.Lock()
	_, busy := h.running[id]
	h.mu.Unlock()
	if busy {
		return nil, fmt.Errorf("follow up on %s: the run is still working (or waits for your answer to a question it asked): answer it or wait for the run to end, or cancel it, then send the follow-up: %w", id, ErrBusy)
	}
	row, err := h.opts.Store.Run(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("follow up on %s: %w", id, err)
	}
	if row.Parent != "" {
		return nil, configError{fmt.Errorf("follow up on %s: it is a sub-agent of run %s; follow up on the root run %s", id, row.Parent, row.Root)}
	}
	st, err := decodeState(row.State)
	if err != nil {
		return nil, fmt.Errorf("follow up on %s: %w", id, err)
	}
	o := Outcome(row.Outcome)
	if st.Pending != nil || (o == OutcomeAwaitingApproval && st.Phase != phaseProposal) {
		return nil, configError{fmt.Errorf("follow up on %s: the run waits for an answer to an act it asked about: "+
			"allow or deny it first (`ioh-lsp approve %s` or `ioh-lsp reject %s`, or in the editor), then follow up", id, id, id)}
	}
	if o == OutcomeRunning && !row.Interrupted(time.Now()) {
		return nil, fmt.Errorf("follow up on %s: another process drives the run: wait for it to end, or cancel it there, then send the follow-up: %w", id, ErrBusy)
	}
	if o.resumable(true) {
		return h.continueRun(ctx, id, text)
	}
	return h.startLinked(ctx, row, st, text)
}

// continueRun adds the follow-up to run id itself and drives it on, with
// a fresh turn budget.
func (h *Harness) continueRun(ctx context.Context, id, text string) (*Run, error) {
	var allowance contract.Budget
	var was, why string
	return h.resume(ctx, id, contract.Budget{}, &userTurn{
		budget: func(ctx context.Context, row *trace.RunRow) (err error) {
			was, why = row.Outcome, row.Error
			allowance, err = h.freshBudget(ctx, row)
			return err
		},
		take: func(a *agentRun) event.Event {
			change, files := TurnPending, changedPaths(a.cs.Changes())
			statement := "Your change is still pending: it was offered for review and not applied; the user follows up before deciding."
			if a.st.Phase != phaseProposal {
				if was == string(OutcomeRunning) {
					was = string(OutcomeInterrupted)
				}
				statement = fmt.Sprintf("The run stopped before it finished (%s%s); nothing was applied.", was, errSuffix(why))
			}
			if a.cs.Len() > 0 {
				statement += fmt.Sprintf(" Your change set (%s) is kept as it is: the follow-up adds to it. "+
					"When you call finish again, the checks and the review cover the whole change.", filesText(files))
			} else {
				change, statement = TurnNone, statement+" Your change set is empty."
			}
			a.st.Phase, a.st.Verifications = phaseLoop, 0
			return a.takeTurn(text, statement, &event.UserTurn{Change: change, Files: files, Budget: budgetSpec(allowance)})
		},
	})
}

// Follow-up changes (event.UserTurn.Change).
const (
	TurnPending  = event.TurnPending
	TurnApplied  = event.TurnApplied
	TurnRejected = event.TurnRejected
	TurnCarried  = event.TurnCarried
	TurnNone     = event.TurnNone
)

// freshBudget gives a continued run a fresh turn: each limit it has
// becomes what its tree spent so far (its steps, for the step limit; the
// time since its first start, for the wall) plus the contract's own
// limit, stored in the row's state for restore. It returns the contract's
// limits the turn gets (0 where the run has none).
func (h *Harness) freshBudget(ctx context.Context, row *trace.RunRow) (contract.Budget, error) {
	cur, st, err := effectiveBudget(row)
	if err != nil {
		return contract.Budget{}, err
	}
	var c contract.Contract
	if err := json.Unmarshal(row.Contract, &c); err != nil {
		return contract.Budget{}, fmt.Errorf("decode stored contract of %s: %w", row.ID, err)
	}
	tree, err := h.opts.Store.Tree(ctx, row.ID)
	if err != nil {
		return contract.Budget{}, err
	}
	var tokens int64
	var usd float64
	for _, r := range tree {
		tokens += r.Totals.Tokens()
		usd += r.Totals.CostUSD
	}
	per := contract.Budget{}
	nb := cur
	if cur.Steps > 0 && c.Budget.Steps > 0 {
		per.Steps, nb.Steps = c.Budget.Steps, row.Totals.Steps+c.Budget.Steps
	}
	if cur.Tokens > 0 && c.Budget.Tokens > 0 {
		per.Tokens, nb.Tokens = c.Budget.Tokens, tokens+c.Budget.Tokens
	}
	if cur.CostUSD > 0 && c.Budget.CostUSD > 0 {
		per.CostUSD, nb.CostUSD = c.Budget.CostUSD, usd+c.Budget.CostUSD
	}
	if cur.Wall > 0 && c.Budget.Wall > 0 {
		spent := (time.Since(row.FirstStarted) + time.Second - 1).Truncate(time.Second)
		per.Wall, nb.Wall = c.Budget.Wall, spent+c.Budget.Wall
	}
	st.Budget, st.NeedCostUSD = &nb, 0
	row.State = st.encode()
	return per, nil
}

// takeTurn adds the user's follow-up to the transcript, after the
// statement of what happened to the earlier change, and returns the
// user_turn event ev completed with the text.
func (a *agentRun) takeTurn(text, statement string, ev *event.UserTurn) event.Event {
	text = a.h.redact.String(text)
	a.addUserText(statement + "\n\nThe user follows up:\n" + text)
	ev.Text = text
	return event.New(a.id, "", 0, ev)
}

// startLinked starts a new run that continues the conversation of prev,
// a run that is over: prev's contract (its checks, scope and policy; the
// goal in the system prompt stays the first turn's), prev's transcript,
// and its change set when it was neither applied nor rejected.
func (h *Harness) startLinked(ctx context.Context, prev *trace.RunRow, pst *runState, text string) (*Run, error) {
	var c contract.Contract
	if err := json.Unmarshal(h.unredactContract(prev.Contract), &c); err != nil {
		return nil, fmt.Errorf("follow up on %s: decode its stored contract: %w", prev.ID, err)
	}
	c.Path = pst.ContractPath
	if h.opts.Model != nil {
		c.Model = h.opts.Model(c.Model)
	}
	cs, ev, statement, err := h.earlierChange(ctx, prev)
	if err != nil {
		return nil, fmt.Errorf("follow up on %s: %w", prev.ID, err)
	}
	if ev.Change == TurnApplied {
		// The checks pass on the workspace the earlier change is in:
		// red/green would refuse any follow-up as proving nothing.
		c.Verify.RedGreen = false
	}
	cj, _ := json.Marshal(&c)
	h.AddConfigured(cj)
	written := c.Budget
	a, err := h.agentFor(&c)
	if err != nil {
		return nil, fmt.Errorf("follow up on %s: %w", prev.ID, err)
	}
	hist, fb, err := h.history(ctx, prev, pst)
	if err != nil {
		return nil, fmt.Errorf("follow up on %s: %w", prev.ID, err)
	}
	now := time.Now()
	a.id = newID("r-")
	a.rootID, a.c, a.cs, a.msgs = a.id, &c, cs, hist
	a.st = &runState{ContractPath: pst.ContractPath, Follows: prev.ID, Masked: pst.Masked,
		MaskedLarge: append([]int(nil), pst.MaskedLarge...), CompactBefore: pst.CompactBefore}
	if c.Budget != written {
		// As newRoot: the state keeps the budget a resume runs under.
		b := c.Budget
		a.st.Budget = &b
	}
	a.pol, a.started, a.ledger, a.tree = a.base, now, NewLedger(a.c.Budget.Tokens, a.c.Budget.CostUSD), newTree(c.Agents)
	a.setup(ctx)
	a.replayTurns(fb)
	ev.Follows, ev.Budget = prev.ID, budgetSpec(a.c.Budget)
	turn := a.takeTurn(text, statement, ev)
	evs := []event.Event{a.event(withTraceContext(ctx, &event.RunStarted{Goal: ev.Text,
		RunModel: &event.RunModel{Provider: a.provider.Name(), Model: c.Model.Name}, RunInstructions: a.instructionsEvent()})), turn}
	for i := range evs {
		evs[i].Step = 0
	}
	row := &trace.RunRow{ID: a.id, Root: a.id, Goal: ev.Text, Contract: cj, Outcome: string(OutcomeRunning),
		FirstStarted: now, State: a.st.encode(), LeaseOwner: h.opts.Owner, LeaseExpiry: now.Add(h.opts.LeaseTTL)}
	if err := h.opts.Store.CreateRun(ctx, row, evs...); err != nil {
		return nil, fmt.Errorf("follow up on %s: %w", prev.ID, err)
	}
	if err := h.storeCarried(ctx, a); err != nil {
		return nil, fmt.Errorf("follow up on %s: %w", prev.ID, err)
	}
	for _, e := range evs {
		a.emit(e)
	}
	return h.launch(ctx, a), nil
}

// agentFor builds the parts of a root agent that follow from its
// contract: the policy, the provider and the models it may reach. A
// dollar limit nobody wrote is dropped for an unpriced model
// (checkPriced), in c itself.
func (h *Harness) agentFor(c *contract.Contract) (*agentRun, error) {
	base, err := h.policyFor(c, nil)
	if err != nil {
		return nil, configError{err}
	}
	a := &agentRun{h: h}
	prov, err := h.opts.Providers(c, a.reportRetry)
	if err != nil {
		return nil, configError{err}
	}
	a.targets = targetsOf(prov, c)
	if err := h.checkPriced(c, a.targets); err != nil {
		return nil, configError{err}
	}
	a.base, a.provider = base, prov
	return a, nil
}

// storeCarried stores a new linked run's carried change set with its row,
// so a resume after a crash has it; on failure the run is closed
// cancelled, its lease released.
func (h *Harness) storeCarried(ctx context.Context, a *agentRun) error {
	a.lastFP = a.cs.Fingerprint()
	if a.cs.Len() == 0 {
		return nil
	}
	data, err := h.marshalChanges(a.cs)
	if err == nil {
		err = h.opts.Store.SetChanges(ctx, a.id, data)
	}
	if err == nil {
		return nil
	}
	err = fmt.Errorf("store the change set it carries on: %w", err)
	cctx := context.WithoutCancel(ctx)
	if serr := h.opts.Store.SetOutcome(cctx, a.id, string(OutcomeCancelled), "", err.Error(), a.st.encode()); serr != nil {
		h.log.Warn("close a follow-up that could not start", "run", a.id, "err", serr)
	}
	h.opts.Store.Release(cctx, a.id, h.opts.Owner)
	return err
}

// earlierChange says what happened to the change of prev, a run that is
// over: the change set a linked run starts with, its user_turn event (the
// change and its files) and the statement the model gets.
func (h *Harness) earlierChange(ctx context.Context, prev *trace.RunRow) (*workspace.ChangeSet, *event.UserTurn, string, error) {
	empty := workspace.NewChangeSet(h.opts.Root)
	var cs *workspace.ChangeSet
	if len(prev.Changes) > 0 {
		var err error
		if cs, err = h.unmarshalChanges(prev.Changes); err != nil {
			return nil, nil, "", fmt.Errorf("restore its change set: %w", err)
		}
	}
	if cs == nil || cs.Len() == 0 {
		return empty, &event.UserTurn{Change: TurnNone}, fmt.Sprintf("The earlier run ended %s without a change.", prev.Outcome), nil
	}
	files := changedPaths(cs.Changes())
	switch Outcome(prev.Outcome) {
	case OutcomeApplied:
		what := "was applied to the workspace: the files hold it now"
		if err := h.notUndone(ctx, prev.ID); errors.Is(err, ErrUndone) {
			what = "was applied to the workspace, then undone (`ioh-lsp undo`): the files are as they were before it"
		} else if err != nil {
			return nil, nil, "", err
		}
		return empty, &event.UserTurn{Change: TurnApplied, Files: files},
			fmt.Sprintf("Your earlier change (%s) %s. This is a new turn: your change set starts empty; read the files again before you edit them.", filesText(files), what), nil
	case OutcomeRejected:
		return empty, &event.UserTurn{Change: TurnRejected, Files: files},
			fmt.Sprintf("The user rejected your earlier change (%s)%s: it was dropped and the workspace does not have it. "+
				"Your change set starts empty; read the files again before you edit them.", filesText(files), errSuffix(prev.Error)), nil
	}
	return cs, &event.UserTurn{Change: TurnCarried, Files: files},
		fmt.Sprintf("Your earlier change (%s) was never applied: the run ended %s%s. It is kept in your change set, so you can go on from it.",
			filesText(files), prev.Outcome, errSuffix(prev.Error)), nil
}

// history is the committed transcript of row, without its first message
// (setup builds that): the transcript of the run it follows, recursively,
// then its own steps; and the user's messages added to it (feedback,
// follow-ups), oldest first, their indices counting the first message.
func (h *Harness) history(ctx context.Context, row *trace.RunRow, st *runState) ([]model.Message, []userFeedback, error) {
	type link struct {
		id string
		fb []userFeedback
	}
	chain := []link{{row.ID, st.Feedback}}
	for next := st.Follows; next != ""; {
		if len(chain) > maxFollows {
			return nil, nil, fmt.Errorf("the conversation of %s follows more than %d runs", row.ID, maxFollows)
		}
		r, err := h.opts.Store.Run(ctx, next)
		if err != nil {
			return nil, nil, fmt.Errorf("the run it follows: %w", err)
		}
		s, err := decodeState(r.State)
		if err != nil {
			return nil, nil, err
		}
		chain = append(chain, link{r.ID, s.Feedback})
		next = s.Follows
	}
	var msgs []model.Message
	var fb []userFeedback
	for i := len(chain) - 1; i >= 0; i-- {
		ms, err := h.stepMessages(ctx, chain[i].id)
		if err != nil {
			return nil, nil, err
		}
		msgs, fb = append(msgs, ms...), append(fb, chain[i].fb...)
	}
	return msgs, fb, nil
}

// stepMessages is the transcript run id's committed steps hold (its
// first message is not stored: setup builds it).
func (h *Harness) stepMessages(ctx context.Context, id string) ([]model.Message, error) {
	steps, err := h.opts.Store.Steps(ctx, id)
	if err != nil {
		return nil, err
	}
	var msgs []model.Message
	for _, s := range steps {
		var ms []model.Message
		if err := json.Unmarshal(s.Messages, &ms); err != nil {
			return nil, fmt.Errorf("decode step %d of %s: %w", s.N, id, err)
		}
		msgs = append(msgs, ms...)
	}
	return msgs, nil
}

// restoreTurns completes a restored transcript: the user's messages of a
// run that follows none go into its own steps; a linked run's transcript
// is the conversation's, rebuilt from the runs it follows.
func (a *agentRun) restoreTurns(ctx context.Context) error {
	if a.st.Follows == "" {
		a.replayTurns(a.st.Feedback)
		return nil
	}
	first, own := a.msgs[0], a.msgs[1:]
	prev, err := a.h.opts.Store.Run(ctx, a.st.Follows)
	if err != nil {
		return fmt.Errorf("the run it follows: %w", err)
	}
	pst, err := decodeState(prev.State)
	if err != nil {
		return err
	}
	hist, fb, err := a.h.history(ctx, prev, pst)
	if err != nil {
		return err
	}
	a.msgs = append(append([]model.Message{first}, hist...), own...)
	a.replayTurns(append(fb, a.st.Feedback...))
	return nil
}

// Withdraw withdraws the offer of run id's change from the approver when
// it is being asked about (a review in an editor, a permission request in
// a panel) and waits for the run to end awaiting approval, its change
// pending; false when nothing was offered. Continue does it itself; a
// front end calls it first when it must see that end before the
// follow-up's turn starts.
func (h *Harness) Withdraw(ctx context.Context, id string) (bool, error) {
	h.mu.Lock()
	withdraw, offered := h.offers[id]
	r := h.live[id]
	h.mu.Unlock()
	if !offered || r == nil {
		return false, nil
	}
	withdraw(errWithdrawn)
	select {
	case <-r.Done():
		return true, nil
	case <-ctx.Done():
		return true, fmt.Errorf("follow up on %s: waiting for its review to close: %w", id, ctx.Err())
	}
}

// offerApprover is the configured approver with offers a follow-up can
// withdraw: while a change is offered, Continue cancels the approver's
// context with errWithdrawn and the answer is Defer (the run ends
// awaiting approval, its change pending), unless the approver answers
// Applied within withdrawGrace (the change reached the files already).
type offerApprover struct {
	Approver
	h *Harness
}

// withdrawGrace is how long a withdrawn offer waits for the approver to
// return.
const withdrawGrace = 2 * time.Second

func (o offerApprover) ApproveChange(ctx context.Context, p *Proposal) (Decision, error) {
	actx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	o.h.mu.Lock()
	o.h.offers[p.Run] = cancel
	o.h.mu.Unlock()
	defer func() {
		o.h.mu.Lock()
		delete(o.h.offers, p.Run)
		o.h.mu.Unlock()
	}()
	type answer struct {
		d   Decision
		err error
	}
	got := make(chan answer, 1)
	go func() {
		d, err := o.Approver.ApproveChange(actx, p)
		got <- answer{d, err}
	}()
	var ans answer
	select {
	case ans = <-got:
	case <-actx.Done():
		if !errors.Is(context.Cause(actx), errWithdrawn) {
			ans = <-got // the run's own context ended: the approver ends with it
			break
		}
		select {
		case ans = <-got:
		case <-time.After(withdrawGrace):
		}
	}
	if errors.Is(context.Cause(actx), errWithdrawn) && ans.d.Answer != Applied {
		return Decision{Answer: Defer, Reason: errWithdrawn.Error()}, nil
	}
	return ans.d, ans.err
}

// filesText names up to 10 files.
func filesText(files []string) string {
	if len(files) > 10 {
		return fmt.Sprintf("%s and %d more files", strings.Join(files[:10], ", "), len(files)-10)
	}
	return strings.Join(files, ", ")
}

// errSuffix is ": err" on one line, "" without one.
func errSuffix(err string) string {
	if err == "" {
		return ""
	}
	return ": " + oneLineErr(err)
}
