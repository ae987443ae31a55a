package policy

import (
	"strings"
	"testing"
)

// grantFixture is a run's policy: the built-in layer, a user deny of a
// command, a workspace deny of a directory, an editor ask, the contract's
// verify.protect as its own built-in layer, and a task scope of src/**.
func grantFixture(t *testing.T) *Policy {
	t.Helper()
	return mustNew(t, Builtin(nil),
		LayerRules{Layer: LayerUser, Rules: []Rule{rule(ActExec, Deny, "rm *"), rule(ActRead, Deny, "**/.env*"), rule(ActWrite, Deny, "checks/**")}},
		LayerRules{Layer: LayerEditor, Rules: []Rule{rule(ActWrite, Ask, "src/gen/**")}},
		LayerRules{Layer: LayerWorkspace, Rules: []Rule{rule(ActWrite, Deny, "vendor/**")}},
		LayerRules{Layer: LayerBuiltin, Rules: ProtectRules([]string{"checks"})},
		ScopeRule([]string{"src/**"}),
	)
}

// A grant lifts the deny or ask of every layer someone wrote, for exactly
// its act and target; without it (control) the same act is refused.
func TestGrantingLiftsWrittenRules(t *testing.T) {
	p := grantFixture(t)
	cases := []struct {
		act    Act
		target string
		was    Effect
		layer  Layer
	}{
		{ActWrite, "notes/a.md", Deny, LayerTask},       // outside the scope
		{ActWrite, "vendor/x.go", Deny, LayerWorkspace}, // workspace config
		{ActWrite, "src/gen/z.go", Ask, LayerEditor},    // editor settings ask
		{ActExec, "rm -rf build", Deny, LayerUser},      // user config
		{ActExec, "true", Ask, LayerDefault},            // exec's default ask
	}
	for _, c := range cases {
		v := p.Check(c.act, c.target)
		if v.Effect != c.was || v.Layer != c.layer {
			t.Errorf("control: %s %s without a grant = %s (layer %s), want %s (layer %s)", c.act, c.target, v.Effect, v.Layer, c.was, c.layer)
		}
		g := p.Granting(c.act, c.target).Check(c.act, c.target)
		if g.Effect != Allow || g.Layer != LayerGrant || g.Rule != nil || !strings.Contains(g.Reason, "grant") {
			t.Errorf("%s %s with its grant = %+v, want allowed by layer grant", c.act, c.target, g)
		}
		// The grant is of that act: the other act on the same target is
		// judged as before.
		other := ActRead
		if c.act == ActRead {
			other = ActWrite
		}
		if got, want := p.Granting(c.act, c.target).Check(other, c.target), p.Check(other, c.target); decided(got) != decided(want) {
			t.Errorf("grant of %s %s changed %s: %+v, want %+v", c.act, c.target, other, got, want)
		}
	}
}

// The built-in layer stands: protected paths (also verify.protect, a
// built-in layer above the user's), the network's default deny and a path
// outside the workspace are refused as without the grant, and the ask
// before reading a secret stays an ask once a user deny is passed over.
func TestGrantingNeverLiftsTheBuiltinLayer(t *testing.T) {
	p := grantFixture(t)
	for _, c := range []struct {
		act    Act
		target string
	}{
		{ActWrite, ".git/config"},
		{ActWrite, ".env"},
		{ActWrite, "src/.env.local"},
		{ActWrite, ".github/workflows/ci.yml"},
		{ActWrite, "checks/run.sh"}, // verify.protect, also denied by the user layer below it
		{ActWrite, "checks"},
		{ActNet, "example.com:443"},
		{ActWrite, "../outside.txt"},
	} {
		v := p.Check(c.act, c.target)
		if v.Effect != Deny {
			t.Fatalf("control: %s %s = %s, want deny", c.act, c.target, v.Effect)
		}
		if Grantable(v.Layer) {
			t.Errorf("%s %s is denied by layer %s, which Grantable says a grant lifts", c.act, c.target, v.Layer)
		}
		g := p.Granting(c.act, c.target).Check(c.act, c.target)
		if decided(g) != decided(v) {
			t.Errorf("%s %s with a grant = %+v, want it as without: %+v", c.act, c.target, g, v)
		}
	}
	v := p.Check(ActRead, ".env")
	if v.Effect != Deny || v.Layer != LayerUser {
		t.Fatalf("control: read .env = %+v, want denied by the user layer", v)
	}
	g := p.Granting(ActRead, ".env").Check(ActRead, ".env")
	if g.Effect != Ask || g.Layer != LayerBuiltin || !strings.Contains(g.Reason, "grant") {
		t.Errorf("read .env with a grant = %+v, want the built-in ask", g)
	}
}

// A grant is compared with the act's final form, exactly: another
// spelling of the same path is covered, a path that cleans to another is
// not, a target with glob characters is a name and not a pattern, and a
// symlink's grant does not open the file it resolves to.
func TestGrantingIsExact(t *testing.T) {
	p := grantFixture(t)
	granted := func(grant, lexical, resolved string) Verdict {
		return p.Granting(ActWrite, grant).CheckPath(ActWrite, lexical, resolved)
	}
	if v := granted("notes/a.md", "./notes/x/../a.md", ""); v.Effect != Allow || v.Layer != LayerGrant {
		t.Errorf("notes/a.md spelt ./notes/x/../a.md = %+v, want the grant", v)
	}
	for _, c := range []struct{ grant, lexical, resolved string }{
		{"notes/a.md", "notes/../.git/config", ""},
		{"notes/a.md", "notes/../lib/a.md", ""},
		{"notes/a.md", "notes/a.md/x", ""},
		{"notes/a.md", "notes/a.mdx", ""},
		{"notes/*", "notes/a.md", ""},
		{"notes/**", "notes/a.md", ""},
		{"NOTES/A.MD", "notes/a.md", ""},
		{"notes/a.md", "notes/a.md", "lib/b.md"},       // a link to a file outside the scope
		{"notes/a.md", "notes/a.md", ".git/hooks/pre"}, // a link into .git
		{"/notes/a.md", "notes/a.md", ""},
		{"", "notes/a.md", ""},
	} {
		if v := granted(c.grant, c.lexical, c.resolved); v.Effect != Deny {
			t.Errorf("grant %q, write %q (resolves to %q) = %+v, want denied", c.grant, c.lexical, c.resolved, v)
		}
	}
	// A link inside the scope to the granted file: both paths are allowed,
	// and the grant, which the resolved path needed, is named.
	if v := granted("notes/a.md", "src/link.md", "notes/a.md"); v.Effect != Allow || v.Layer != LayerGrant {
		t.Errorf("src/link.md resolving to the granted notes/a.md = %+v, want the grant named", v)
	}
	// Exec: the argv joined by single spaces, as the verdict names it.
	if v := p.Granting(ActExec, "rm -rf build").CheckArgv([]string{"rm", "-rf", "build", "src"}); v.Effect != Deny {
		t.Errorf("grant of rm -rf build allowed rm -rf build src: %+v", v)
	}
	if v := p.CheckShell("rm -rf build"); v.Effect == Allow {
		t.Fatalf("control: the shell line rm -rf build = %+v, want refused or asked", v)
	}
	if v := p.Granting(ActExec, "sh -c rm -rf build").CheckShell("rm -rf build"); v.Effect != Allow || v.Layer != LayerGrant {
		t.Errorf("grant of sh -c rm -rf build, shell line rm -rf build = %+v, want the grant", v)
	}
}

// A deny of the built-in layer is named before a deny of any other layer,
// wherever the built-in layer sits, so the verdict says whether a grant
// could lift it.
func TestBuiltinDenyIsNamedFirst(t *testing.T) {
	p := mustNew(t, Builtin(nil),
		LayerRules{Layer: LayerUser, Rules: []Rule{rule(ActWrite, Deny, "checks/**")}},
		LayerRules{Layer: LayerBuiltin, Rules: ProtectRules([]string{"checks"})})
	v := p.Check(ActWrite, "checks/a.sh")
	if v.Effect != Deny || v.Layer != LayerBuiltin || v.Rule == nil || v.Rule.Pattern != "checks/**" {
		t.Errorf("write checks/a.sh = %+v, want the built-in rule named", v)
	}
	if v := p.Check(ActWrite, "other/a.sh"); v.Effect != Allow {
		t.Errorf("control: write other/a.sh = %+v, want allowed", v)
	}
}

func TestGrantable(t *testing.T) {
	for l, want := range map[Layer]bool{
		LayerBuiltin: false, LayerDefault: false, LayerGrant: false, "": false, "bogus": false,
		LayerUser: true, LayerEditor: true, LayerWorkspace: true, LayerTask: true, LayerRemembered: true,
	} {
		if Grantable(l) != want {
			t.Errorf("Grantable(%q) = %v, want %v", l, !want, want)
		}
	}
}
