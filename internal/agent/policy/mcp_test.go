package policy

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestMCPAct(t *testing.T) {
	user := LayerRules{Layer: LayerUser, Rules: []Rule{
		rule(ActMCP, Allow, "docs/*"),
		rule(ActMCP, Deny, "github/delete_*"),
		rule(ActMCP, Allow, "github/*"),
	}}
	ws := LayerRules{Layer: LayerWorkspace, Rules: []Rule{rule(ActMCP, Ask, "docs/fetch")}}
	p := mustNew(t, Builtin(nil), user, ws)
	cases := []struct {
		target string
		want   decision
	}{
		{"docs/search", decision{Allow, LayerUser, "docs/*"}},
		{"docs/fetch", decision{Ask, LayerWorkspace, "docs/fetch"}},
		{"github/create_issue", decision{Allow, LayerUser, "github/*"}},
		{"github/delete_repo", decision{Deny, LayerUser, "github/delete_*"}},
		// The loose reading of a deny ignores case; an allow does not.
		{"github/Delete_Repo", decision{Deny, LayerUser, "github/delete_*"}},
		{"Docs/search", decision{Ask, LayerDefault, ""}},
		// "*" stays on its side of the slash: docs/* is not docsx/*.
		{"docsx/search", decision{Ask, LayerDefault, ""}},
		{"other/tool", decision{Ask, LayerDefault, ""}},
	}
	for _, c := range cases {
		v := p.Check(ActMCP, c.target)
		if diff := cmp.Diff(decided(v), c.want); diff != "" {
			t.Errorf("Check(mcp, %q) (-got +want):\n%s", c.target, diff)
		}
		if v.Act != ActMCP || v.Target != c.target {
			t.Errorf("Check(mcp, %q) verdict names %s %q", c.target, v.Act, v.Target)
		}
	}
	if got := Default(ActMCP); got != Ask {
		t.Errorf("Default(mcp) = %s, want ask", got)
	}
	if got := MCPTarget("docs", "search"); got != "docs/search" {
		t.Errorf("MCPTarget = %q", got)
	}
}

func TestMCPPatternValidated(t *testing.T) {
	for _, pat := range []string{"docs", "/tool", "docs/", "a/b/c", "docs/[x"} {
		_, err := New(LayerRules{Layer: LayerUser, Rules: []Rule{rule(ActMCP, Allow, pat)}})
		if !errors.Is(err, ErrInvalidRule) {
			t.Errorf("pattern %q: err = %v, want ErrInvalidRule", pat, err)
		}
	}
	// An untrusted layer's mcp allow is dropped like any other allow.
	l, dropped := Untrusted(LayerRules{Layer: LayerWorkspace, Rules: []Rule{rule(ActMCP, Allow, "*/*"), rule(ActMCP, Deny, "x/y")}})
	if len(dropped) != 1 || len(l.Rules) != 1 || l.Rules[0].Effect != Deny {
		t.Errorf("Untrusted kept %v, dropped %v", l.Rules, dropped)
	}
}
