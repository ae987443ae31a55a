package policy

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func rule(act Act, eff Effect, pat string) Rule { return Rule{Act: act, Effect: eff, Pattern: pat} }

func mustNew(t *testing.T, layers ...LayerRules) *Policy {
	t.Helper()
	p, err := New(layers...)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

type decision struct {
	Effect  Effect
	Layer   Layer
	Pattern string // deciding rule's pattern, "" for the default
}

func decided(v Verdict) decision {
	d := decision{Effect: v.Effect, Layer: v.Layer}
	if v.Rule != nil {
		d.Pattern = v.Rule.Pattern
	}
	return d
}

func TestCheckLayers(t *testing.T) {
	user := LayerRules{Layer: LayerUser, Rules: []Rule{
		rule(ActExec, Allow, "go test *"),
		rule(ActExec, Deny, "go test ** -exec *"),
		rule(ActExec, Deny, "go test ** -exec=*"),
		rule(ActExec, Ask, "curl *"),
		rule(ActNet, Allow, "proxy.golang.org"),
		rule(ActNet, Allow, "*.example.com:443"),
		rule(ActRead, Deny, "secrets/**"),
	}}
	editor := LayerRules{Layer: LayerEditor, Rules: []Rule{
		rule(ActExec, Allow, "make"),
		rule(ActWrite, Ask, "go.mod"),
	}}
	workspace := LayerRules{Layer: LayerWorkspace, Rules: []Rule{
		rule(ActExec, Deny, "rm *"),
		rule(ActNet, Deny, "evil.example.com"),
	}}
	remembered := LayerRules{Layer: LayerRemembered, Rules: []Rule{
		rule(ActExec, Allow, "curl https://x"),
		rule(ActWrite, Allow, ".git/config"),
		rule(ActExec, Allow, "rm -rf build"),
	}}
	p := mustNew(t, Builtin([]string{"time/format_test.go"}), user, editor, workspace, remembered)

	tests := []struct {
		act    Act
		target string
		want   decision
	}{
		{ActRead, "main.go", decision{Allow, LayerDefault, ""}},
		{ActWrite, "main.go", decision{Allow, LayerDefault, ""}},
		{ActExec, "ls", decision{Ask, LayerDefault, ""}},
		{ActNet, "github.com", decision{Deny, LayerDefault, ""}},
		// exec argv patterns: a final * spans zero or more arguments.
		{ActExec, "go test", decision{Allow, LayerUser, "go test *"}},
		{ActExec, "go test ./...", decision{Allow, LayerUser, "go test *"}},
		{ActExec, "go test -run X ./pkg/...", decision{Allow, LayerUser, "go test *"}},
		{ActExec, "go vet ./...", decision{Ask, LayerDefault, ""}},
		// deny beats allow, with ** spanning any arguments before -exec.
		{ActExec, "go test -exec /tmp/x ./...", decision{Deny, LayerUser, "go test ** -exec *"}},
		{ActExec, "go test -v -exec /tmp/x", decision{Deny, LayerUser, "go test ** -exec *"}},
		{ActExec, "go test -exec=/tmp/x", decision{Deny, LayerUser, "go test ** -exec=*"}},
		// deny and ask rules also catch a program named by its path.
		{ActExec, "/usr/bin/rm -rf /", decision{Deny, LayerWorkspace, "rm *"}},
		{ActExec, "make", decision{Allow, LayerEditor, "make"}},
		{ActExec, "make all", decision{Ask, LayerDefault, ""}},
		// remembered allow answers an ask, never a deny.
		{ActExec, "curl https://x", decision{Allow, LayerRemembered, "curl https://x"}},
		{ActExec, "curl https://y", decision{Ask, LayerUser, "curl *"}},
		{ActExec, "rm -rf build", decision{Deny, LayerWorkspace, "rm *"}},
		// net host[:port] globs; a missing pattern port means any port.
		{ActNet, "proxy.golang.org:443", decision{Allow, LayerUser, "proxy.golang.org"}},
		{ActNet, "PROXY.golang.org", decision{Allow, LayerUser, "proxy.golang.org"}},
		{ActNet, "a.example.com:443", decision{Allow, LayerUser, "*.example.com:443"}},
		{ActNet, "a.example.com:80", decision{Deny, LayerDefault, ""}},
		{ActNet, "a.example.com", decision{Deny, LayerDefault, ""}},
		{ActNet, "evil.example.com:443", decision{Deny, LayerWorkspace, "evil.example.com"}},
		// protected paths and verify.protect.
		{ActWrite, ".git/config", decision{Deny, LayerBuiltin, ".git/**"}},
		{ActWrite, ".git", decision{Deny, LayerBuiltin, ".git/**"}},
		{ActWrite, "sub/.env.local", decision{Deny, LayerBuiltin, "**/.env*"}},
		{ActWrite, "certs/server.pem", decision{Deny, LayerBuiltin, "**/*.pem"}},
		{ActWrite, ".github/workflows/ci.yml", decision{Deny, LayerBuiltin, ".github/workflows/**"}},
		{ActWrite, ".github/dependabot.yml", decision{Allow, LayerDefault, ""}},
		{ActWrite, "time/format_test.go", decision{Deny, LayerBuiltin, "time/format_test.go"}},
		{ActWrite, "go.mod", decision{Ask, LayerEditor, "go.mod"}},
		{ActRead, ".env", decision{Ask, LayerBuiltin, "**/.env*"}},
		{ActRead, "secrets/a/b", decision{Deny, LayerUser, "secrets/**"}},
		// laundering by spelling: cleaned, case-folded for denials.
		{ActWrite, "./.git/hooks/pre-commit", decision{Deny, LayerBuiltin, ".git/**"}},
		{ActWrite, "src/../.git/HEAD", decision{Deny, LayerBuiltin, ".git/**"}},
		{ActWrite, ".GIT/config", decision{Deny, LayerBuiltin, ".git/**"}},
		{ActWrite, `a\..\.git\hooks\x`, decision{Deny, LayerBuiltin, ".git/**"}},
		{ActWrite, "x/.IOH/tasks", decision{Allow, LayerDefault, ""}},
		{ActWrite, ".Ioh/tasks/t.yaml", decision{Deny, LayerBuiltin, ".ioh/**"}},
		// outside the workspace.
		{ActWrite, "../x", decision{Deny, LayerDefault, ""}},
		{ActRead, "/etc/passwd", decision{Deny, LayerDefault, ""}},
		{ActWrite, "a/../../x", decision{Deny, LayerDefault, ""}},
	}
	for _, tt := range tests {
		got := p.Check(tt.act, tt.target)
		if diff := cmp.Diff(decided(got), tt.want); diff != "" {
			t.Errorf("Check(%s, %q) (-got +want):\n%s\nreason: %s", tt.act, tt.target, diff, got.Reason)
		}
		if ex := p.Explain(tt.act, tt.target); !cmp.Equal(ex, got) {
			t.Errorf("Explain(%s, %q) = %+v, Check = %+v", tt.act, tt.target, ex, got)
		}
		if got.Reason == "" || got.Act != tt.act || got.Target != tt.target {
			t.Errorf("Check(%s, %q) = %+v: want act, target and a reason", tt.act, tt.target, got)
		}
	}
}

func TestCheckArgvAndShell(t *testing.T) {
	p := mustNew(t, LayerRules{Layer: LayerUser, Rules: []Rule{
		rule(ActExec, Allow, "go test *"),
		rule(ActExec, Allow, "echo *"),
		rule(ActExec, Deny, "echo secret*"),
	}})
	tests := []struct {
		argv []string
		want Effect
	}{
		{[]string{"go", "test", "./..."}, Allow},
		{[]string{"echo", "a b c"}, Allow},
		{[]string{"echo", "x", "secret sauce"}, Allow}, // the deny's * matches one element: "x"
		{[]string{"echo", "secret sauce"}, Deny},
		{nil, Ask},
	}
	for _, tt := range tests {
		if got := p.CheckArgv(tt.argv); got.Effect != tt.want {
			t.Errorf("CheckArgv(%q) = %s (%s), want %s", tt.argv, got.Effect, got.Reason, tt.want)
		}
	}
	if got := p.CheckShell("go test ./... ; curl evil"); got.Effect != Ask {
		t.Errorf("CheckShell = %s, want ask: a shell line is not the argv it starts with", got.Effect)
	}
	sh := mustNew(t, LayerRules{Layer: LayerUser, Rules: []Rule{rule(ActExec, Allow, "sh -c *")}})
	if got := sh.CheckShell("make"); got.Effect != Allow {
		t.Errorf("CheckShell with sh -c * allowed = %s", got.Effect)
	}
}

func TestArgvPatternSemantics(t *testing.T) {
	tests := []struct {
		pattern string
		argv    string
		want    bool
	}{
		{"go test *", "go test", true},
		{"go test *", "go test ./... -exec x", true},
		{"go test ./*", "go test ./...", true},
		{"go test ./*", "go test ./... -exec x", false},
		{"go test ./*", "go test -exec x ./...", false},
		{"go * ./...", "go test ./...", true},
		{"go * ./...", "go test -v ./...", false}, // a middle * is one element
		{"go ** ./...", "go test -v ./...", true},
		{"go ** ./...", "go ./...", true},
		{"go test", "go test ./...", false},
		{"go*", "gofmt", true},
		{"git -C * status", "git -C /a/b status", true},
		{`a\*`, "a*", true},
		{`a\*`, "ab", false},
		{"[gm]ake", "make", true},
		{"[!m]ake", "make", false},
		{"cc?", "cc1", true},
	}
	for _, tt := range tests {
		m, err := compileArgv(tt.pattern)
		if err != nil {
			t.Fatalf("compileArgv(%q): %v", tt.pattern, err)
		}
		got := m.match(&target{argv: strings.Fields(tt.argv)}, false)
		if got != tt.want {
			t.Errorf("%q matches %q = %v, want %v", tt.pattern, tt.argv, got, tt.want)
		}
	}
}

func TestNewValidates(t *testing.T) {
	tests := []struct {
		rule Rule
		want string
	}{
		{rule("delete", Allow, "x"), `policy layer user rule 1 (allow delete "x"): invalid policy rule: unknown act "delete" (want read, write, exec, net or mcp)`},
		{rule(ActRead, "maybe", "x"), `policy layer user rule 1 (maybe read "x"): invalid policy rule: unknown effect "maybe" (want allow, ask or deny)`},
		{rule(ActRead, Allow, " "), `policy layer user rule 1 (allow read " "): invalid policy rule: empty pattern`},
		{rule(ActWrite, Allow, "a/[b"), `policy layer user rule 1 (allow write "a/[b"): invalid policy rule: path pattern "a/[b" is not a valid glob (unbalanced braces, an unclosed [ or an empty [], or a trailing backslash)`},
		{rule(ActWrite, Allow, "/etc/**"), `policy layer user rule 1 (allow write "/etc/**"): invalid policy rule: path pattern "/etc/**" must be workspace-relative`},
		{rule(ActWrite, Allow, "../x"), `policy layer user rule 1 (allow write "../x"): invalid policy rule: path pattern "../x" must not contain ".."`},
		{rule(ActExec, Allow, "go [test"), `policy layer user rule 1 (allow exec "go [test"): invalid policy rule: argv pattern "go [test": unclosed [ in glob`},
		{rule(ActNet, Allow, "https://x.com"), `policy layer user rule 1 (allow net "https://x.com"): invalid policy rule: net pattern "https://x.com" must be host[:port], no scheme or path`},
		{rule(ActNet, Allow, ":80"), `policy layer user rule 1 (allow net ":80"): invalid policy rule: net pattern ":80" has no host`},
	}
	for _, tt := range tests {
		_, err := New(LayerRules{Layer: LayerUser, Rules: []Rule{rule(ActRead, Allow, "ok/**"), tt.rule}})
		if err == nil {
			t.Errorf("New(%v) succeeded, want %q", tt.rule, tt.want)
			continue
		}
		if !errors.Is(err, ErrInvalidRule) {
			t.Errorf("New(%v) error %v is not ErrInvalidRule", tt.rule, err)
		}
		if diff := cmp.Diff(err.Error(), tt.want); diff != "" {
			t.Errorf("New(%v) error (-got +want):\n%s", tt.rule, diff)
		}
	}
	base := mustNew(t)
	if _, err := base.With(LayerRules{Layer: LayerTask, Rules: []Rule{rule(ActNet, Deny, "a b")}}); err == nil {
		t.Error("With accepted an invalid rule")
	}
}

func TestWithIsImmutable(t *testing.T) {
	base := mustNew(t, Builtin(nil))
	run, err := base.With(LayerRules{Layer: LayerRemembered, Rules: []Rule{rule(ActExec, Allow, "make *")}})
	if err != nil {
		t.Fatal(err)
	}
	if got := base.Check(ActExec, "make all").Effect; got != Ask {
		t.Errorf("base after With: %s, want ask", got)
	}
	if got := run.Check(ActExec, "make all").Effect; got != Allow {
		t.Errorf("with remembered: %s, want allow", got)
	}
	if diff := cmp.Diff(len(run.Layers()), 2); diff != "" {
		t.Error(diff)
	}
}

func TestAllowRunNeverOpensProtectedPath(t *testing.T) {
	p := mustNew(t, Builtin([]string{"checks"}))
	run, err := p.With(LayerRules{Layer: LayerRemembered, Rules: []Rule{
		rule(ActWrite, Allow, "**"), rule(ActWrite, Allow, ".git/config"), rule(ActWrite, Allow, "checks/run.sh"),
	}})
	if err != nil {
		t.Fatal(err)
	}
	for _, target := range []string{".git/config", ".ioh/config.yaml", "checks/run.sh", "checks", "a/id_rsa.pub"} {
		if v := run.Check(ActWrite, target); v.Effect != Deny || v.Layer != LayerBuiltin {
			t.Errorf("write %s after allow-run = %s from %s, want deny from builtin", target, v.Effect, v.Layer)
		}
	}
	if v := run.Check(ActWrite, "main.go"); v.Effect != Allow || v.Layer != LayerRemembered {
		t.Errorf("write main.go = %+v", v)
	}
}

// TestCheckWriteLaundering builds real symlinks and renames in a temp tree
// and checks that the resolved target decides when it is stricter.
func TestCheckWriteLaundering(t *testing.T) {
	root := t.TempDir()
	for _, d := range []string{".git/hooks", "src"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(root, ".git", "config"), []byte("[core]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	links := map[string]string{
		"src/cfg":  "../.git/config",
		"gitdir":   ".git",
		"src/env":  "../.env",
		"src/ok":   "main.go",
		"tests.go": "src/format_test.go",
	}
	for name, to := range links {
		if err := os.Symlink(to, filepath.Join(root, name)); err != nil {
			t.Skipf("symlinks unavailable: %v", err)
		}
	}
	resolve := func(rel string) string {
		abs := filepath.Join(root, filepath.FromSlash(rel))
		real, err := filepath.EvalSymlinks(filepath.Dir(abs))
		if err != nil {
			t.Fatal(err)
		}
		full := filepath.Join(real, filepath.Base(abs))
		if fi, err := os.Lstat(full); err == nil && fi.Mode()&os.ModeSymlink != 0 {
			dest, err := os.Readlink(full)
			if err != nil {
				t.Fatal(err)
			}
			full = filepath.Join(filepath.Dir(full), dest)
		}
		realRoot, _ := filepath.EvalSymlinks(root)
		r, err := filepath.Rel(realRoot, full)
		if err != nil {
			t.Fatal(err)
		}
		return filepath.ToSlash(r)
	}
	p := mustNew(t, Builtin([]string{"src/format_test.go"}), LayerRules{Layer: LayerRemembered, Rules: []Rule{rule(ActWrite, Allow, "**")}})
	tests := []struct {
		lexical string
		want    Effect
	}{
		{"src/cfg", Deny},
		{"gitdir/hooks/pre-commit", Deny},
		{"src/env", Deny},
		{"src/ok", Allow},
		{"tests.go", Deny},
	}
	for _, tt := range tests {
		res := resolve(tt.lexical)
		if got := p.Check(ActWrite, tt.lexical).Effect; got != Allow {
			t.Errorf("lexical check alone of %s = %s: the test would prove nothing", tt.lexical, got)
		}
		v := p.CheckWrite(tt.lexical, res)
		if v.Effect != tt.want {
			t.Errorf("CheckWrite(%s, %s) = %s (%s), want %s", tt.lexical, res, v.Effect, v.Reason, tt.want)
		}
		if v.Effect == Deny && !strings.Contains(v.Reason, "resolves to") {
			t.Errorf("CheckWrite(%s) reason %q does not name the resolved path", tt.lexical, v.Reason)
		}
	}
	// A rename is a write to its source and its destination.
	for _, mv := range [][2]string{{".env", "config.txt"}, {"notes.txt", ".git/hooks/post-checkout"}} {
		from, to := p.CheckWrite(mv[0], ""), p.CheckWrite(mv[1], "")
		if from.Effect != Deny && to.Effect != Deny {
			t.Errorf("rename %s -> %s allowed", mv[0], mv[1])
		}
	}
}

func TestScopeRule(t *testing.T) {
	for _, scope := range [][]string{{"time/**"}, {"time/**", "docs/*.md"}, {"./time/**", "{a,b}/**"}} {
		p := mustNew(t, Builtin(nil), ScopeRule(scope))
		tests := map[string]Effect{"time/format.go": Allow, "main.go": Deny, "Time/x.go": Deny, "time/../main.go": Deny}
		if len(scope) > 1 {
			tests["docs/README.md"] = Allow
			tests["docs/sub/x.md"] = Deny
			if scope[1] == "{a,b}/**" {
				tests["docs/README.md"] = Deny
				tests["docs/sub/x.md"] = Deny
				tests["b/x"] = Allow
			}
		}
		for target, want := range tests {
			if got := p.Check(ActWrite, target); got.Effect != want {
				t.Errorf("scope %q: write %s = %s (%s), want %s", scope, target, got.Effect, got.Reason, want)
			}
		}
	}
	if got := ScopeRule(nil); len(got.Rules) != 0 {
		t.Errorf("empty scope has rules %v", got.Rules)
	}
}

func TestNarrowing(t *testing.T) {
	if err := Narrowing([]Rule{rule(ActExec, Deny, "curl *"), rule(ActWrite, Ask, "go.sum")}); err != nil {
		t.Errorf("deny and ask rules refused: %v", err)
	}
	err := Narrowing([]Rule{rule(ActExec, Deny, "curl *"), rule(ActExec, Allow, "rm *")})
	if err == nil || !strings.Contains(err.Error(), "rule 1") {
		t.Errorf("allow rule accepted or not named: %v", err)
	}
	if err := Narrowing([]Rule{rule(ActNet, Deny, "a/b")}); err == nil {
		t.Error("invalid narrowing rule accepted")
	}
	parent := mustNew(t, Builtin(nil), LayerRules{Layer: LayerUser, Rules: []Rule{rule(ActExec, Allow, "go *")}})
	good, _ := parent.With(LayerRules{Layer: LayerTask, Rules: []Rule{rule(ActExec, Deny, "go run *")}})
	if err := parent.Narrows(good); err != nil {
		t.Errorf("narrowing child refused: %v", err)
	}
	wide, _ := parent.With(LayerRules{Layer: LayerTask, Rules: []Rule{rule(ActExec, Allow, "make *")}})
	if err := parent.Narrows(wide); err == nil {
		t.Error("widening child accepted")
	}
	other := mustNew(t, Builtin(nil))
	if err := parent.Narrows(other); err == nil {
		t.Error("child without the parent's layers accepted")
	}
}

func TestUntrusted(t *testing.T) {
	l := LayerRules{Layer: LayerWorkspace, Rules: []Rule{
		rule(ActExec, Allow, "curl *"), rule(ActExec, Deny, "rm *"), rule(ActNet, Allow, "*"), rule(ActWrite, Ask, "go.mod"),
	}}
	kept, dropped := Untrusted(l)
	want := LayerRules{Layer: LayerWorkspace, Rules: []Rule{rule(ActExec, Deny, "rm *"), rule(ActWrite, Ask, "go.mod")}}
	if diff := cmp.Diff(kept, want); diff != "" {
		t.Errorf("kept (-got +want):\n%s", diff)
	}
	if diff := cmp.Diff(dropped, []Rule{rule(ActExec, Allow, "curl *"), rule(ActNet, Allow, "*")}); diff != "" {
		t.Errorf("dropped (-got +want):\n%s", diff)
	}
	p := mustNew(t, Builtin(nil), kept)
	if got := p.Check(ActExec, "curl http://evil"); got.Effect != Ask {
		t.Errorf("untrusted allow still applies: %s", got.Effect)
	}
}

// MayAllow: an allow or ask net rule in any layer may open the network; a
// deny rule or no rule does not.
func TestMayAllow(t *testing.T) {
	for _, tc := range []struct {
		rules []Rule
		want  bool
	}{
		{nil, false},
		{[]Rule{{Act: ActNet, Effect: Deny, Pattern: "*"}, {Act: ActExec, Effect: Allow, Pattern: "go *"}}, false},
		{[]Rule{{Act: ActNet, Effect: Allow, Pattern: "proxy.golang.org:443"}}, true},
		{[]Rule{{Act: ActNet, Effect: Ask, Pattern: "*"}}, true},
	} {
		p, err := New(Builtin(nil), LayerRules{Layer: LayerUser, Rules: tc.rules})
		if err != nil {
			t.Fatal(err)
		}
		if got := p.MayAllow(ActNet); got != tc.want {
			t.Errorf("%v: MayAllow(net) = %v", tc.rules, got)
		}
	}
}
