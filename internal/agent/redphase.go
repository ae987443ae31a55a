package agent

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/ioh-lsp/ioh-lsp/internal/agent/contract"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/event"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/model"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/verify"
)

// maxRedSummary bounds the red-phase summary in the first user message.
const maxRedSummary = 3000

// redSummary is the first message's section on the red phase, once
// redFirst has run it ("" before, and for runs that have none).
func (a *agentRun) redSummary(context.Context) string { return a.red.summary }

// redFirst runs the contract's checks on the unchanged tree before the
// first model call (also of a resumed run: its first message is built
// again), when red/green is on, from the run's goroutine (the
// run's id is already with its caller, so an editor is not kept
// waiting): the user hears of each check that cannot run (a preflight
// problem, a warning event) before any call is spent, and the first user
// message is built again with what the model must know of them: each
// failing test with its own messages and location, and each preflight
// problem. The runs stay in the red cache, so the first finish does not
// run them again. Sub-agents, contracts without checks or red/green, and
// runs without a sandbox are left alone.
func (a *agentRun) redFirst(ctx context.Context) {
	if a.parent != "" || !a.c.Verify.RedGreen || len(a.c.Verify.Checks) == 0 || a.h.opts.Sandbox == nil || a.st.Phase == phaseProposal {
		return // a finished change under review needs no red phase
	}
	var evs []event.Event
	results, err := verify.RunRed(ctx, verify.Options{
		Sandbox: a.sandboxFor("check"), Root: a.h.opts.Root.Dir(), Verify: a.c.Verify,
		ContractPath: a.contractRel(), Red: &a.red.RedCache, Withheld: a.withheld(), OnCheckStart: a.checkStarted,
		OnCheck: func(c verify.CheckResult) { evs = append(evs, a.event(checkRunEvent(c))) },
	})
	switch {
	case err != nil && ctx.Err() == nil:
		evs = append(evs, a.event(&event.Warning{Message: "the checks could not run before the first step: " + err.Error()}))
	case err == nil:
		for _, c := range results {
			if c.Preflight != "" {
				evs = append(evs, a.event(&event.Warning{Message: "preflight: " + c.Preflight}))
			}
		}
		a.red.summary = redSummaryText(results, a.c.Verify)
	}
	a.record(ctx, evs)
	if a.red.summary != "" && len(a.msgs) > 0 && a.msgs[0].Role == model.RoleUser {
		a.msgs[0].Text = a.h.redact.String(a.firstMessage(ctx))
	}
}

// record stores and emits events that belong to no step (step 0).
func (a *agentRun) record(ctx context.Context, evs []event.Event) {
	if len(evs) == 0 {
		return
	}
	for i := range evs {
		evs[i].Step = 0
	}
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if err := a.h.opts.Store.AppendEvents(cctx, evs...); err != nil {
		a.h.log.Warn("store red-phase events", "run", a.id, "err", err)
	}
	for _, e := range evs {
		a.emit(e)
	}
}

// redSummaryText is the first message's section on the red phase: the
// checks that cannot run (preflight problems) first, then each failing
// check with its failing tests, bounded to maxRedSummary bytes with what
// was left out and how to see it.
func redSummaryText(results []verify.CheckResult, v contract.Verify) string {
	if len(results) == 0 {
		return ""
	}
	f := &feedback{max: maxRedSummary}
	f.b.WriteString("\n\n# The checks before your change (red phase)\n")
	for _, c := range results {
		if c.Preflight != "" {
			f.add("Check " + c.Name + " cannot run as it should: " + strings.TrimPrefix(c.Preflight, "check "+c.Name+" ") + "\n" +
				"This is a problem of the environment or the check's command, not of the code: say so in finish if you cannot fix it.\n")
		}
	}
	failing := 0
	for _, c := range results {
		switch {
		case c.Passed:
			f.add(fmt.Sprintf("Check %s already passes on the unchanged tree: it proves nothing about your change.\n", c.Name))
		case c.Preflight == "":
			if failing == 0 {
				f.add("These checks fail on the unchanged tree; your change must make them pass:\n")
			}
			failing++
			f.checkFailures(c, commandOf(v, c.Name))
		}
	}
	return f.b.String()
}
