package policy

import "fmt"

// Defaults is each act's effect when no rule matches
// (docs/policy.md#layers-and-the-decision): reads and writes inside the
// workspace are allowed, commands and MCP tool calls ask, the network is
// denied. Paths outside the workspace are denied before any rule is seen.
var defaults = map[Act]Effect{
	ActRead:  Allow,
	ActWrite: Allow,
	ActExec:  Ask,
	ActNet:   Deny,
	ActMCP:   Ask,
}

// Default returns act's effect when no rule matches.
func Default(act Act) Effect {
	if e, ok := defaults[act]; ok {
		return e
	}
	return Deny
}

// decide is the one code path behind Check, Explain, CheckArgv, CheckShell
// and CheckWrite. Every layer's matching rules are collected; then:
//
//  1. a deny in any layer wins;
//  2. else an allow in the remembered layer wins (it is the user's answer
//     to an ask, so it must beat the ask that prompted it, never a deny);
//  3. else an ask in any layer;
//  4. else an allow in any layer;
//  5. else the act's default (LayerDefault, Rule nil).
//
// Among rules of the winning effect the first match in the lowest layer is
// named, except that a deny of a layer no grant can lift (the built-in
// one) is named before any other deny, so a protected path reports its
// built-in rule wherever its layer sits. A policy made by Granting then
// passes over, for the granted act only, the layers a grant lifts.
func (p *Policy) decide(act Act, subject string, t *target) Verdict {
	v := p.pick(act, subject, t, false)
	if p.grant == nil || v.Effect == Allow || !p.grant.covers(act, t) {
		return v
	}
	return p.granted(act, subject, t, v)
}

// pick decides act from the rules of every layer, or with fixedOnly from
// those of the layers no grant lifts (Grantable false).
func (p *Policy) pick(act Act, subject string, t *target, fixedOnly bool) Verdict {
	type hit struct {
		rule  Rule
		layer Layer
	}
	var first [4]*hit // indexed by rank(effect)
	var remembered, fixedDeny *hit
	for _, l := range p.layers {
		lifted := Grantable(l.layer.Layer)
		if fixedOnly && lifted {
			continue
		}
		for _, cr := range l.rules {
			if cr.rule.Act != act {
				continue
			}
			if !cr.m.match(t, cr.rule.Effect != Allow) {
				continue
			}
			h := &hit{rule: cr.rule, layer: l.layer.Layer}
			if k := rank(cr.rule.Effect); first[k] == nil {
				first[k] = h
			}
			if cr.rule.Effect == Allow && l.layer.Layer == LayerRemembered && remembered == nil {
				remembered = h
			}
			if cr.rule.Effect == Deny && !lifted && fixedDeny == nil {
				fixedDeny = h
			}
		}
	}
	pick := fixedDeny
	switch {
	case pick != nil:
	case first[rank(Deny)] != nil:
		pick = first[rank(Deny)]
	case remembered != nil:
		pick = remembered
	case first[rank(Ask)] != nil:
		pick = first[rank(Ask)]
	default:
		pick = first[rank(Allow)]
	}
	if pick == nil {
		e := Default(act)
		return Verdict{Act: act, Target: subject, Effect: e, Layer: LayerDefault,
			Reason: fmt.Sprintf("no rule matched: the default for %s is %s", act, e)}
	}
	r := pick.rule
	return Verdict{Act: act, Target: subject, Effect: r.Effect, Rule: &r, Layer: pick.layer,
		Reason: fmt.Sprintf("%s rule %q decides %s", pick.layer, r.String(), r.Effect)}
}

// String renders a rule as "effect act pattern", the form used in reasons.
func (r Rule) String() string {
	return fmt.Sprintf("%s %s %s", r.Effect, r.Act, r.Pattern)
}
