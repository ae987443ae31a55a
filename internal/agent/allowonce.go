package agent

import (
	"context"

	"github.com/ioh-lsp/ioh-lsp/internal/agent/contract"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/policy"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/tools"
)

// A run that the policy stopped at an act (a write outside the task's
// scope, a command a config rule denies) can be tried again with that one
// act allowed once: the editor's "Allow once" quick fix on a
// policy-denied diagnostic (docs/policy.md#allow-once). The new run
// starts on the same harness (its store, its policy layers); the grant is
// part of its state, so a resumed run keeps it until it is used.

// Grant allows one act once: Act on exactly Target, as the denied
// verdict named them (policy.Verdict's Act and Target, which the trace's
// policy event and the editor's diagnostic carry).
type Grant struct {
	Act    policy.Act `json:"act"`
	Target string     `json:"target"`
}

// StartAllowingOnce starts c as Start does, with g allowed once. The first
// act of the run whose target is exactly g's (as the policy judges it:
// the clean path, and for a symlink the path it resolves to as well) and
// that a rule of the user, editor, workspace, task or remembered layer
// refuses or asks about is allowed, its policy event naming the layer
// "grant", and the grant is used up; the same act a second time is judged
// as if there had been no grant. The user's grant never lifts the
// built-in layer (protected paths, verify.protect, the contract file; the
// ask before reading a file that holds secrets) nor a path outside the
// workspace: such an act is judged as without it (policy.Granting).
func (h *Harness) StartAllowingOnce(ctx context.Context, c *contract.Contract, g Grant) (*Run, error) {
	a, err := h.newRoot(ctx, c)
	if err != nil {
		return nil, err
	}
	a.st.Grants = append(a.st.Grants, g)
	return h.launch(ctx, a), nil
}

// grantOnce returns v, the run's verdict on act, or, when a grant of the
// run covers act and judged with it act fares better than v, that verdict;
// the grant is then used up. The act is judged by judge, the one function
// that decides every act, on the run's policy with the grant
// (policy.Granting), so the grant sees the act exactly as the check did.
func (a *agentRun) grantOnce(act tools.Act, v policy.Verdict) policy.Verdict {
	if v.Effect == policy.Allow {
		return v
	}
	for i, g := range a.st.Grants {
		if g.Act != act.Act {
			continue
		}
		granted := judge(a.pol.Granting(g.Act, g.Target), act)
		if rank(granted.Effect) >= rank(v.Effect) {
			continue
		}
		a.st.Grants = append(a.st.Grants[:i:i], a.st.Grants[i+1:]...)
		return granted
	}
	return v
}

// rank orders effects from allow to deny.
func rank(e policy.Effect) int {
	switch e {
	case policy.Allow:
		return 0
	case policy.Ask:
		return 1
	}
	return 2
}
