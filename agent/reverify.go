package agent

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/ioh-lsp/ioh-lsp/agent/contract"
	"github.com/ioh-lsp/ioh-lsp/agent/verify"
	"github.com/ioh-lsp/ioh-lsp/workspace"
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
	rep, err := h.opts.Verify(ctx, verify.Options{
		Sandbox: h.opts.Sandbox, Root: h.opts.Root.Dir(), Changes: changes, Verify: c.Verify,
		ContractPath: h.contractRel(st.ContractPath), Withheld: h.withheldOutside(&c),
	})
	if err != nil {
		return nil, fmt.Errorf("reverify %s: %w", id, err)
	}
	f := verdictOf(rep)
	f.Rebased = true
	a := &agentRun{h: h, id: id, rootID: row.Root, totals: row.Totals, sink: h.opts.Events}
	ev := a.event(f)
	ev.Step = row.Totals.Steps
	if err := h.opts.Store.AppendEvents(ctx, ev); err != nil {
		h.log.Warn("store the rebased verification", "run", id, "err", err)
	}
	a.emit(ev)
	return rep, nil
}
