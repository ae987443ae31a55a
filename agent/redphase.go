package agent

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/ioh-lsp/ioh-lsp/agent/contract"
	"github.com/ioh-lsp/ioh-lsp/agent/trace"
	"github.com/ioh-lsp/ioh-lsp/agent/verify"
)

// maxRedSummary bounds the red-phase summary in the first user message.
const maxRedSummary = 3000

// redSummary runs the contract's checks on the unchanged tree before the
// first model call, when red/green is on, and returns what the model must
// know of them for its first message: each failing test with its own
// messages and location, and each check that could not run (a preflight
// problem, said in words). The runs stay in the run's red cache, so the
// first finish does not run them again; their events wait in redEvents
// for the run's row (flushRed). Sub-agents, contracts without checks or
// red/green, and runs without a sandbox get "".
func (a *agentRun) redSummary(ctx context.Context) string {
	if a.parent != "" || !a.c.Verify.RedGreen || len(a.c.Verify.Checks) == 0 || a.h.opts.Sandbox == nil {
		return ""
	}
	results, err := verify.RunRed(ctx, verify.Options{
		Sandbox: a.h.opts.Sandbox, Root: a.h.opts.Root.Dir(), Verify: a.c.Verify,
		ContractPath: a.contractRel(), Red: &a.red.RedCache,
		OnCheck: func(c verify.CheckResult) {
			a.red.events = append(a.red.events, a.event(checkRunEvent(c)))
		},
	})
	if err != nil {
		if ctx.Err() == nil {
			a.red.events = append(a.red.events, a.event(&trace.Warning{Message: "the checks could not run before the first step: " + err.Error()}))
		}
		return ""
	}
	for _, c := range results {
		if c.Preflight != "" {
			a.red.events = append(a.red.events, a.event(&trace.Warning{Message: "preflight: " + c.Preflight}))
		}
	}
	return redSummaryText(results, a.c.Verify)
}

// flushRed stores and emits the events of the red phase redSummary ran,
// once the run's row exists: the user hears of a preflight problem before
// any model call is spent.
func (a *agentRun) flushRed(ctx context.Context) {
	if len(a.red.events) == 0 {
		return
	}
	evs := a.red.events
	a.red.events = nil
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
