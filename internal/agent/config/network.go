package config

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/ioh-lsp/ioh-lsp/internal/agent/policy"
)

// fileNetwork is the `network` key: the hosts sandboxed commands may reach
// through the run's egress proxy (docs/policy.md#networkallow-and-networkdeny).
type fileNetwork struct {
	// Allow and Deny list net patterns (host or host:port globs) or
	// presets ("preset:go").
	Allow []string `yaml:"allow"`
	Deny  []string `yaml:"deny"`
}

// PresetPrefix marks a network entry that names a preset.
const PresetPrefix = "preset:"

// Presets are the hosts of the common registries a network entry can name
// by `preset:NAME`, each a net pattern.
var Presets = map[string][]string{
	"go":     {"proxy.golang.org:443", "sum.golang.org:443"},
	"npm":    {"registry.npmjs.org:443"},
	"pypi":   {"pypi.org:443", "files.pythonhosted.org:443"},
	"crates": {"crates.io:443", "index.crates.io:443", "static.crates.io:443"},
}

// presetNames lists the presets, sorted, for error messages.
func presetNames() string {
	var names []string
	for n := range Presets {
		names = append(names, PresetPrefix+n)
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}

// NetworkRules turns network entries into net rules of one effect: a
// preset into its hosts, a pattern into itself. The error names the
// entry's index.
func NetworkRules(effect policy.Effect, entries []string) ([]policy.Rule, error) {
	var rules []policy.Rule
	for i, e := range entries {
		patterns := []string{e}
		if name, ok := strings.CutPrefix(e, PresetPrefix); ok {
			if patterns, ok = Presets[name]; !ok {
				return nil, &entryError{i, fmt.Sprintf("unknown preset %q (want one of %s)", e, presetNames())}
			}
		}
		for _, pat := range patterns {
			r := policy.Rule{Act: policy.ActNet, Effect: effect, Pattern: pat}
			if err := policy.CheckRule(r); err != nil {
				if inner := errors.Unwrap(err); inner != nil && !errors.Is(inner, policy.ErrInvalidRule) {
					err = inner
				}
				return nil, &entryError{i, err.Error()}
			}
			rules = append(rules, r)
		}
	}
	return rules, nil
}

type entryError struct {
	index int
	msg   string
}

func (e *entryError) Error() string { return e.msg }

// mergeNetwork adds a layer's network.allow and network.deny as net rules
// of its policy layer; an untrusted layer's allow entries are dropped with
// a warning, as its allow rules are.
func (c *Config) mergeNetwork(p *parsed, kind source, untrusted bool, warn func(key, why string)) error {
	n := p.Network
	if n == nil {
		return nil
	}
	layer := map[source]*policy.LayerRules{fromUser: &c.user, fromEditor: &c.editor, fromWorkspace: &c.workspace}[kind]
	for _, list := range []struct {
		key     string
		effect  policy.Effect
		entries []string
	}{{"deny", policy.Deny, n.Deny}, {"allow", policy.Allow, n.Allow}} {
		rules, err := NetworkRules(list.effect, list.entries)
		if err != nil {
			var ee *entryError
			if errors.As(err, &ee) {
				return p.errAt(fmt.Sprintf("$.network.%s[%d]", list.key, ee.index), "network.%s[%d]: %s", list.key, ee.index, ee.msg)
			}
			return err
		}
		if untrusted && list.effect == policy.Allow {
			for _, e := range slices.Compact(slices.Clone(list.entries)) {
				warn(fmt.Sprintf("network.allow entry %q", e), c.notTrusted(kind))
			}
			continue
		}
		layer.Rules = append(layer.Rules, rules...)
	}
	return nil
}
