package policy

// MayAllow reports whether some layer holds a rule for act that allows or
// asks: whether an act of that kind could ever be allowed in this policy
// when its default denies (the network). A run's `run` tool gets the
// network proxy only then (docs/policy.md#where-the-proxy-applies).
func (p *Policy) MayAllow(act Act) bool {
	for _, l := range p.layers {
		for _, r := range l.rules {
			if r.rule.Act == act && r.rule.Effect != Deny {
				return true
			}
		}
	}
	return false
}
