package policy

import (
	"errors"
	"fmt"
	"path"
	"strings"
)

// ErrInvalidRule marks a rule that fails validation.
var ErrInvalidRule = errors.New("invalid policy rule")

// Policy is a validated, immutable stack of layers. It is safe for
// concurrent use; With returns a new Policy.
type Policy struct {
	layers []compiledLayer
	grant  *grant // the user's one-time grant (Granting), nil for none
}

type compiledLayer struct {
	layer LayerRules
	rules []compiledRule
}

type compiledRule struct {
	rule Rule
	m    matcher
}

// New validates every rule of every layer (act, effect, pattern syntax) and
// returns the policy; the layers are given low to high. An error names the
// layer and the rule's index.
func New(layers ...LayerRules) (*Policy, error) {
	p := &Policy{}
	for _, l := range layers {
		cl, err := compileLayer(l)
		if err != nil {
			return nil, err
		}
		p.layers = append(p.layers, cl)
	}
	return p, nil
}

func compileLayer(l LayerRules) (compiledLayer, error) {
	cl := compiledLayer{layer: LayerRules{Layer: l.Layer, Rules: append([]Rule(nil), l.Rules...)}}
	for i, r := range l.Rules {
		m, err := compile(r)
		if err != nil {
			return compiledLayer{}, fmt.Errorf("policy layer %s rule %d (%s %s %q): %w", l.Layer, i, r.Effect, r.Act, r.Pattern, err)
		}
		cl.rules = append(cl.rules, compiledRule{rule: r, m: m})
	}
	return cl, nil
}

// With returns a copy of p with l added as its highest layer (a task
// contract's rules, or answers remembered during a run).
func (p *Policy) With(l LayerRules) (*Policy, error) {
	cl, err := compileLayer(l)
	if err != nil {
		return nil, err
	}
	np := &Policy{layers: make([]compiledLayer, 0, len(p.layers)+1), grant: p.grant}
	np.layers = append(np.layers, p.layers...)
	np.layers = append(np.layers, cl)
	return np, nil
}

// Layers returns the policy's layers, low to high (copies), so a run can
// record and restore the policy it ran under.
func (p *Policy) Layers() []LayerRules {
	out := make([]LayerRules, len(p.layers))
	for i, l := range p.layers {
		out[i] = LayerRules{Layer: l.layer.Layer, Rules: append([]Rule(nil), l.layer.Rules...)}
	}
	return out
}

// Check decides act on target. Targets: for read and write a
// workspace-relative slash path (cleaned here; a path that leaves the
// workspace is denied); for exec an argv written as space-separated words
// (use CheckArgv when elements may contain spaces); for net "host[:port]".
func (p *Policy) Check(act Act, subject string) Verdict {
	return p.Explain(act, subject)
}

// Explain is Check; the name reads better where the caller wants the
// deciding rule and layer. Both are one code path.
func (p *Policy) Explain(act Act, subject string) Verdict {
	if act == ActExec {
		return p.decide(act, subject, &target{argv: strings.Fields(subject)})
	}
	t, v, ok := prepare(act, subject)
	if !ok {
		return v
	}
	return p.decide(act, subject, t)
}

// CheckArgv decides running argv exactly as given (elements may contain
// spaces). The verdict's Target is the argv joined by spaces.
func (p *Policy) CheckArgv(argv []string) Verdict {
	return p.decide(ActExec, strings.Join(argv, " "), &target{argv: append([]string(nil), argv...)})
}

// CheckShell decides a shell line: it is checked as the argv
// ["sh", "-c", line], so an exec rule must name the shell to allow it
// ("sh -c *"); a rule for "go test *" does not allow "go test ./... ; x".
func (p *Policy) CheckShell(line string) Verdict {
	return p.CheckArgv([]string{"sh", "-c", line})
}

// CheckWrite is CheckPath for a write. A rename is a write to its source
// and to its destination: check both.
func (p *Policy) CheckWrite(lexical, resolved string) Verdict {
	return p.CheckPath(ActWrite, lexical, resolved)
}

// CheckPath decides a read or write whose lexical target resolves (through
// symlinks) to resolved; both are workspace-relative slash paths, resolved
// "" when it is the same. The stricter verdict wins, so a symlink cannot
// launder a protected path; of two equal ones a grant's is named, so a
// grant that only the resolved path needed shows as used.
func (p *Policy) CheckPath(act Act, lexical, resolved string) Verdict {
	v := p.Check(act, lexical)
	if resolved == "" || resolved == lexical {
		return v
	}
	r := p.Check(act, resolved)
	if rank(r.Effect) > rank(v.Effect) || (r.Effect == v.Effect && r.Layer == LayerGrant && v.Layer != LayerGrant) {
		r.Target = lexical
		r.Reason = fmt.Sprintf("resolves to %s: %s", resolved, r.Reason)
		return r
	}
	return v
}

// prepare normalises a read/write/net target.
func prepare(act Act, raw string) (*target, Verdict, bool) {
	switch act {
	case ActRead, ActWrite:
		clean, ok := CleanPath(raw)
		if !ok {
			return nil, Verdict{Act: act, Target: raw, Effect: Deny, Layer: LayerDefault,
				Reason: fmt.Sprintf("%s %s: outside the workspace", act, raw)}, false
		}
		return &target{path: clean}, Verdict{}, true
	case ActNet:
		host, port := splitHostPort(strings.TrimSpace(raw))
		return &target{host: strings.ToLower(host), port: port}, Verdict{}, true
	case ActMCP:
		return &target{mcp: strings.TrimSpace(raw)}, Verdict{}, true
	}
	return nil, Verdict{Act: act, Target: raw, Effect: Deny, Layer: LayerDefault,
		Reason: fmt.Sprintf("unknown act %q", act)}, false
}

// CleanPath cleans a workspace-relative path to the form rules match: slash
// separated, no "." or ".." elements, no leading "./". It reports false for
// an absolute path or one that leaves the workspace. The root itself is ".".
func CleanPath(p string) (string, bool) {
	p = strings.ReplaceAll(p, `\`, "/")
	if p == "" || strings.HasPrefix(p, "/") || (len(p) >= 2 && p[1] == ':') {
		return "", false
	}
	c := path.Clean(p)
	if c == ".." || strings.HasPrefix(c, "../") {
		return "", false
	}
	return c, true
}

func rank(e Effect) int {
	switch e {
	case Allow:
		return 1
	case Ask:
		return 2
	case Deny:
		return 3
	}
	return 0
}
