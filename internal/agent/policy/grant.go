package policy

import (
	"fmt"
	"strings"
)

// A grant is the user's explicit "allow once" of one act on one target
// (the editor's quick fix on a policy-denied diagnostic,
// docs/policy.md#allow-once). The user's click outranks rules written in
// configuration or in the task: for exactly that act and target, the
// deny and ask rules of the user, editor, workspace, task and remembered
// layers are passed over. It never outranks the built-in layer (the
// protected paths, verify.protect, the contract file, the ask before
// reading a file that holds secrets), the act's default where that is a
// deny (the network), or a path outside the workspace.

// Grantable reports whether a deny or ask decided by layer l is one a
// grant lifts: true for the layers of rules someone wrote (user, editor,
// workspace, task, remembered), false for the built-in layer, the
// default and any layer name it does not know. The editor offers "Allow
// once" only where this holds; Granting passes over exactly these layers.
func Grantable(l Layer) bool {
	switch l {
	case LayerUser, LayerEditor, LayerWorkspace, LayerTask, LayerRemembered:
		return true
	}
	return false
}

// grant is a granted act and its target in the form decide compares.
type grant struct {
	act Act
	key string
}

// Granting returns a copy of p in which act on target is granted: an act
// whose target is, after the same normalisation the check applies
// (CleanPath for a path, lower-cased host and port for the network), equal
// to target as a string is allowed (layer LayerGrant) unless a rule of
// the built-in layer denies or asks about it, or the act's default is
// deny; the rules of the other layers are passed over. The comparison is exact, never a glob: a grant of "notes/*"
// covers a file named "notes/*" only, and one of "notes/a.md" does not
// cover "notes/../.git/config" (that is ".git/config"). CheckPath judges a
// symlink's lexical and resolved paths each on its own, so a grant of a
// link's name does not open the file it resolves to. A target that no
// act can have (a path outside the workspace) grants nothing. Every other
// act is decided as p decides it. An exec target is the argv joined by
// single spaces, as a verdict names it.
func (p *Policy) Granting(act Act, target string) *Policy {
	np := &Policy{layers: p.layers}
	if key, ok := grantKey(act, target); ok {
		np.grant = &grant{act: act, key: key}
	}
	return np
}

func grantKey(act Act, target string) (string, bool) {
	if act == ActExec {
		return target, target != ""
	}
	t, _, ok := prepare(act, target)
	if !ok {
		return "", false
	}
	return targetKey(act, t), true
}

// targetKey is the one spelling of a prepared target a grant compares.
func targetKey(act Act, t *target) string {
	switch act {
	case ActRead, ActWrite:
		return t.path
	case ActExec:
		return strings.Join(t.argv, " ")
	case ActNet:
		return t.host + " " + t.port
	case ActMCP:
		return t.mcp
	}
	return ""
}

// covers reports whether g grants act on t.
func (g *grant) covers(act Act, t *target) bool {
	return g.act == act && g.key != "" && targetKey(act, t) == g.key
}

// granted decides a granted act that the layers' rules (v) refuse or ask
// about: the built-in layer and the default decide alone.
func (p *Policy) granted(act Act, subject string, t *target, v Verdict) Verdict {
	f := p.pick(act, subject, t, true)
	switch {
	case f.Rule != nil && f.Effect == Deny:
		return f // a protected path: the same verdict as without the grant
	case f.Rule != nil && f.Effect == Ask:
		f.Reason = fmt.Sprintf("the user's one-time grant passes over %s, but %s", v.Reason, f.Reason)
		return f
	case f.Rule == nil && f.Effect == Deny:
		return v // the act's default is deny: a grant lifts rules, not it
	}
	return Verdict{Act: act, Target: subject, Effect: Allow, Layer: LayerGrant,
		Reason: fmt.Sprintf("allowed once by the user's grant of %s %s, over %s", act, subject, v.Reason)}
}
