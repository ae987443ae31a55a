package config

import (
	"strings"
	"testing"
)

// TestProvenance: each key's value comes from the highest layer the merge
// honoured. Untrusted, the workspace's provider and the editor settings'
// (a repository may write them) are ignored with the warning naming
// `trusted:`, while the editor's narrowing approve and the workspace's
// lower budget apply; trusted, the workspace's provider wins. Keys no
// layer sets show their defaults.
func TestProvenance(t *testing.T) {
	for _, trust := range []bool{false, true} {
		o, _ := setup(t, trust)
		_, ss, err := Provenance(o)
		if err != nil {
			t.Fatal(err)
		}
		m := map[string]Setting{}
		for _, s := range ss {
			m[s.Key] = s
		}
		check := func(key, value, layer string, ignored int) {
			t.Helper()
			s := m[key]
			if s.Value != value || s.Layer != layer || len(s.Ignored) != ignored {
				t.Errorf("trusted=%v: %s = %+v, want %q from %s with %d ignored", trust, key, s, value, layer, ignored)
			}
			for _, ig := range s.Ignored {
				if !strings.Contains(ig.Warning, "trusted:") && !strings.Contains(ig.Warning, "only") {
					t.Errorf("%s: the warning does not name the fix: %s", key, ig.Warning)
				}
			}
		}
		check("approve", "never", LayerEditor, 1) // the workspace's auto: only the user config may choose it
		check("budget.steps", "5", LayerWorkspace, 0)
		check("budget.tokens", "500000", LayerDefault, 0)
		check("sandbox.limits.cpu", "1m", LayerUser, 0)
		rules := m["policy.rules"]
		if rules.Layer != "user+editor+workspace" || !strings.Contains(rules.Value, "go test *") || !strings.Contains(rules.Value, "rm *") {
			t.Errorf("trusted=%v: policy.rules = %+v, want every layer's rules", trust, rules)
		}
		if dropped := len(rules.Ignored); (dropped > 0) == trust {
			t.Errorf("trusted=%v: policy.rules ignored %+v, want the workspace's allow rules dropped exactly when untrusted", trust, rules.Ignored)
		}
		if trust {
			check("sandbox.limits.memory", "64GiB", LayerWorkspace, 0)
			check("model.provider", "openai-compatible", LayerWorkspace, 0)
		} else {
			check("sandbox.limits.memory", "256MiB", LayerUser, 1)
			check("model.provider", "anthropic", LayerUser, 1)
			check("model.base_url", "", LayerDefault, 1)
		}
	}
}
