package policy

import (
	"fmt"
	"strings"
)

// ProtectedPaths are never writable by the agent
// (docs/policy.md#protected-paths), whatever any layer says: Builtin
// denies writes to them, and a deny beats every allow, including an
// approver's "allow for this run".
var ProtectedPaths = []string{
	".git/**",
	".ioh/**",
	".vscode/**",
	".idea/**",
	".github/workflows/**",
	"**/.env*",
	"**/*.pem",
	"**/*.key",
	"**/id_rsa*",
	"**/id_ed25519*",
}

// secretReads are files whose content would carry secrets into a prompt:
// reading them asks first.
var secretReads = []string{
	"**/.env*",
	"**/*.pem",
	"**/*.key",
	"**/id_rsa*",
	"**/id_ed25519*",
}

// Builtin returns the built-in layer: write denials for ProtectedPaths and
// for each extra protected path (a contract's verify.protect, the contract
// file itself), and ask-before-read for files that usually hold secrets.
// An extra path p protects p itself and, should p be a directory,
// everything under it (p/**). Extra paths are globs; New reports a bad one.
func Builtin(protect []string) LayerRules {
	l := LayerRules{Layer: LayerBuiltin}
	for _, p := range ProtectedPaths {
		l.Rules = append(l.Rules, Rule{Act: ActWrite, Effect: Deny, Pattern: p})
	}
	l.Rules = append(l.Rules, ProtectRules(protect)...)
	for _, p := range secretReads {
		l.Rules = append(l.Rules, Rule{Act: ActRead, Effect: Ask, Pattern: p})
	}
	return l
}

// ProtectRules returns write denials for extra protected paths, for a
// caller that adds them as their own layer (say the task layer, once the
// contract is known): Builtin(nil) below, then With a layer holding these.
func ProtectRules(protect []string) []Rule {
	var rules []Rule
	for _, p := range protect {
		p = strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(p), "./"), "/")
		if p == "" {
			continue
		}
		rules = append(rules, Rule{Act: ActWrite, Effect: Deny, Pattern: p})
		if !strings.HasSuffix(p, "/**") {
			rules = append(rules, Rule{Act: ActWrite, Effect: Deny, Pattern: p + "/**"})
		}
	}
	return rules
}

// ScopeRule returns the task layer for a contract's scope.write: a write to
// any path that matches none of the globs is denied. It is one rule with a
// negated alternation ("!{a/**,b/**}") in which each glob stays one
// alternative: a "," or "}" it holds outside its own braces is escaped
// (escapeAlternative), so "docs/a,**" names a file "a,..." under docs and
// never widens the scope. A glob CheckPathGlob refuses becomes a rule of
// its own ahead of the alternation, so the layer fails to compile (New,
// With) naming it rather than being joined into a pattern that might
// parse. An empty scope returns an empty layer (no narrowing).
func ScopeRule(write []string) LayerRules {
	l := LayerRules{Layer: LayerTask}
	var globs []string
	for _, w := range write {
		w = strings.TrimPrefix(strings.TrimSpace(w), "./")
		if w == "" {
			continue
		}
		if CheckPathGlob(w) != nil {
			l.Rules = append(l.Rules, Rule{Act: ActWrite, Effect: Deny, Pattern: "!" + w})
			continue
		}
		globs = append(globs, w)
	}
	switch len(globs) {
	case 0:
	case 1:
		l.Rules = append(l.Rules, Rule{Act: ActWrite, Effect: Deny, Pattern: "!" + globs[0]})
	default:
		alts := make([]string, len(globs))
		for i, g := range globs {
			alts[i] = escapeAlternative(g)
		}
		l.Rules = append(l.Rules, Rule{Act: ActWrite, Effect: Deny, Pattern: "!{" + strings.Join(alts, ",") + "}"})
	}
	return l
}

// Narrowing checks rules meant for a layer that may only narrow (a task
// contract's policy, a sub-agent's extra rules): an allow rule could widen
// what the layers below permit (turning an exec default of ask into allow,
// say), so any allow rule is an error naming its index. Deny and ask rules
// are validated as New would.
func Narrowing(rules []Rule) error {
	for i, r := range rules {
		if r.Effect == Allow {
			return fmt.Errorf("%w: rule %d (%s) would widen the policy: only deny and ask rules may be added here", ErrInvalidRule, i, r)
		}
		if _, err := compile(r); err != nil {
			return fmt.Errorf("rule %d (%s): %w", i, r, err)
		}
	}
	return nil
}

// Narrows reports an error when child permits something p does not. A
// child built as p.With(layer) where layer passes Narrowing always narrows;
// this checks the layer structure: child must hold p's layers unchanged, in
// order, and add only deny and ask rules above them.
func (p *Policy) Narrows(child *Policy) error {
	if len(child.layers) < len(p.layers) {
		return fmt.Errorf("%w: child policy has fewer layers than its parent", ErrInvalidRule)
	}
	for i, l := range p.layers {
		cl := child.layers[i]
		if cl.layer.Layer != l.layer.Layer || len(cl.rules) != len(l.rules) {
			return fmt.Errorf("%w: child policy changes parent layer %d (%s)", ErrInvalidRule, i, l.layer.Layer)
		}
		for j := range l.rules {
			if cl.rules[j].rule != l.rules[j].rule {
				return fmt.Errorf("%w: child policy changes rule %d of parent layer %s", ErrInvalidRule, j, l.layer.Layer)
			}
		}
	}
	for _, cl := range child.layers[len(p.layers):] {
		var rules []Rule
		for _, cr := range cl.rules {
			rules = append(rules, cr.rule)
		}
		if err := Narrowing(rules); err != nil {
			return fmt.Errorf("child layer %s: %w", cl.layer.Layer, err)
		}
	}
	return nil
}

// Untrusted filters a layer read from an untrusted source (a workspace's
// .ioh/config.yaml, a task file in an untrusted workspace): deny and ask
// rules stay, allow rules are dropped and returned so the caller can report
// them, and so are ask rules of an act whose default is deny (the
// network): there an ask would open what the default keeps shut, a prompt
// away.
func Untrusted(l LayerRules) (kept LayerRules, dropped []Rule) {
	kept = LayerRules{Layer: l.Layer}
	for _, r := range l.Rules {
		if r.Effect == Allow || (r.Effect == Ask && defaults[r.Act] == Deny) {
			dropped = append(dropped, r)
			continue
		}
		kept.Rules = append(kept.Rules, r)
	}
	return kept, dropped
}

// CheckRule reports what is wrong with one rule (act, effect, pattern
// syntax), as New would for a layer holding it, or nil.
func CheckRule(r Rule) error {
	_, err := compile(r)
	return err
}
