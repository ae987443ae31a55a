package agent

import (
	"context"

	"github.com/ioh-lsp/ioh-lsp/agent/contract"
	"github.com/ioh-lsp/ioh-lsp/agent/policy"
	"github.com/ioh-lsp/ioh-lsp/agent/tools"
)

// A run that the policy stopped at an act (a write to a file no rule
// allows, the network) can be tried again with that one act allowed
// once: the editor's "Allow once" quick fix on a policy-denied
// diagnostic. The new run starts on the same harness (its store, its
// policy layers); the grant is part of its state, so a resumed run keeps
// it until it is used.

// Grant allows one act once: Act on exactly Target, as the denied
// verdict named them (policy.Verdict's Act and Target, which the trace's
// policy event and the editor's diagnostic carry).
type Grant struct {
	Act    policy.Act `json:"act"`
	Target string     `json:"target"`
}

// StartAllowingOnce starts c as Start does, with g allowed once. The first
// act of the run whose verdict names exactly g's act and target, and that
// the run's policy refuses or asks about only for want of an allow, is
// allowed and the grant is used up: a deny rule in any layer still wins
// (a grant is an allow rule in the layer of the user's answers), and the
// same act a second time is judged as if there had been no grant.
func (h *Harness) StartAllowingOnce(ctx context.Context, c *contract.Contract, g Grant) (*Run, error) {
	a, err := h.newRoot(ctx, c)
	if err != nil {
		return nil, err
	}
	a.st.Grants = append(a.st.Grants, g)
	return h.launch(ctx, a), nil
}

// grantOnce returns v, or, when a grant of the run names exactly v's act
// and target and the policy with that grant allows act, the allowing
// verdict; the grant is then used up.
func (a *agentRun) grantOnce(act tools.Act, v policy.Verdict) policy.Verdict {
	if v.Effect == policy.Allow {
		return v
	}
	for i, g := range a.st.Grants {
		if g.Act != v.Act || g.Target != v.Target {
			continue
		}
		// The grant as a rule is consulted for this exact act only, so a
		// target that reads as a wider pattern allows nothing else; one
		// that is no valid pattern grants nothing.
		p, err := a.pol.With(policy.LayerRules{Layer: policy.LayerRemembered,
			Rules: []policy.Rule{{Act: g.Act, Effect: policy.Allow, Pattern: g.Target}}})
		if err != nil {
			return v
		}
		granted := judge(p, act)
		if granted.Effect != policy.Allow {
			return v
		}
		a.st.Grants = append(a.st.Grants[:i:i], a.st.Grants[i+1:]...)
		granted.Reason = "allowed once by the user (" + v.Reason + ")"
		return granted
	}
	return v
}
