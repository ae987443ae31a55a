package agent

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/ioh-lsp/ioh-lsp/internal/agent/contract"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/verify"
	"github.com/ioh-lsp/ioh-lsp/internal/workspace"
)

// Reverify runs run id's checks again, in the sandbox, on changes: the
// run's change carried onto text the user edited while the review waited
// (workspace.ChangeSet.Rebase), whose verdict the original verification
// no longer vouches for. The verdict is recorded in the trace as a
// verification event marked rebased. A contract without checks returns a
// nil report.
func (h *Harness) Reverify(ctx context.Context, id string, changes []workspace.Change) (*verify.Report, error) {
	row, err := h.opts.Store.Run(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("reverify %s: %w", id, err)
	}
	var c contract.Contract
	if err := json.Unmarshal(row.Contract, &c); err != nil {
		return nil, fmt.Errorf("reverify %s: decode stored contract: %w", id, err)
	}
	st, err := decodeState(row.State)
	if err != nil {
		return nil, fmt.Errorf("reverify %s: %w", id, err)
	}
	if len(c.Verify.Checks) == 0 {
		return nil, nil
	}
	c.Path = st.ContractPath
	a := &agentRun{h: h, id: id, rootID: row.Root, totals: row.Totals, sink: h.opts.Events, st: st}
	// A check with network: true reaches only what the run's policy
	// allows, through a proxy of its own (netaccess.go).
	if a.base, err = h.policyFor(&c, nil); err != nil {
		return nil, fmt.Errorf("reverify %s: %w", id, err)
	}
	if a.pol, err = a.withRemembered(); err != nil {
		return nil, fmt.Errorf("reverify %s: %w", id, err)
	}
	rep, err := h.opts.Verify(ctx, verify.Options{
		Sandbox: a.sandboxFor("check"), Root: h.opts.Root.Dir(), Changes: changes, Verify: c.Verify,
		ContractPath: h.contractRel(st.ContractPath), Withheld: h.withheldOutside(&c),
	})
	netEvs, _ := a.closeNet()
	if err != nil {
		return nil, fmt.Errorf("reverify %s: %w", id, err)
	}
	f := verdictOf(rep)
	f.Rebased = true
	ev := a.event(f)
	ev.Step = row.Totals.Steps
	for i := range netEvs {
		netEvs[i].Step = ev.Step
	}
	if err := h.opts.Store.AppendEvents(ctx, append(netEvs, ev)...); err != nil {
		h.log.Warn("store the rebased verification", "run", id, "err", err)
	}
	for _, e := range netEvs {
		a.emit(e)
	}
	a.emit(ev)
	return rep, nil
}
