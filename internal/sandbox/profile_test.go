//go:build unix

package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ioh-lsp/ioh-lsp/internal/sandbox/internal/view"
)

func TestMacProfileText(t *testing.T) {
	p := buildMacProfile(macView{Read: []string{"/usr", "/Users/me/go/pkg/mod"}, Deny: []string{"/Users/me/.ssh"},
		Writable: []string{"/private/tmp/run1", "/Users/me/proj", `/odd "path")`}})
	for _, want := range []string{
		"(version 1)", "(deny file-read*)\n(allow file-read-metadata)", `(subpath (param "READ_1"))`,
		"(deny file-write*)", `(subpath (param "WRITABLE_0"))`, `(subpath (param "WRITABLE_2"))`,
		"(deny file-read* file-write*\n    (subpath (param \"DENY_0\"))", "(deny network*)", "(allow signal (target same-sandbox))",
	} {
		if !strings.Contains(p.Text, want) {
			t.Errorf("profile lacks %q:\n%s", want, p.Text)
		}
	}
	if strings.Contains(p.Text, "/Users") || strings.Contains(p.Text, "odd") {
		t.Errorf("paths must travel as parameters, not in the profile text:\n%s", p.Text)
	}
	wantArgs := []string{"-p", p.Text, "-D", "DENY_0=/Users/me/.ssh", "-D", "READ_0=/usr", "-D", "READ_1=/Users/me/go/pkg/mod",
		"-D", "WRITABLE_0=/private/tmp/run1", "-D", "WRITABLE_1=/Users/me/proj", "-D", `WRITABLE_2=/odd "path")`}
	if diff := cmp.Diff(p.args(), wantArgs); diff != "" {
		t.Errorf("args (-got +want):\n%s", diff)
	}
	if net := buildMacProfile(macView{Writable: []string{"/t"}, Network: true}); strings.Contains(net.Text, "network") {
		t.Errorf("network requested but denied:\n%s", net.Text)
	}
}

// TestMacProfileReadView evaluates the profile generated for a run over a
// developer's home (credentials, notes, the Go module cache, a project)
// with a small interpreter of the SBPL it uses: deny by default, except
// the read view computed as for the Linux tiers; credentials denied even
// to stat; the module cache, the project and the system readable; writes
// only to the writable roots. Control: every denied file exists and is
// readable outside the sandbox.
func TestMacProfileReadView(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	t.Setenv("XDG_STATE_HOME", filepath.Join(home, ".local", "state"))
	t.Setenv("IOH_STATE_DIR", "")
	t.Setenv("GOPATH", "") // the module cache at its default, $HOME/go/pkg/mod
	t.Setenv("GOMODCACHE", "")
	files := []string{".ssh/id_ed25519", ".aws/credentials", ".netrc", ".cargo/credentials.toml", ".local/state/ioh/traces.db",
		"notes.txt", "go/pkg/mod/example.com/m@v1.0.0/m.go", ".cargo/registry/index/x", "src/proj/main.go"}
	for _, f := range files {
		writeTree(t, home, map[string]string{f: "secret-or-not\n"})
	}
	// The run's temp dir as macOS names it: through a link (/var is
	// /private/var there), which Seatbelt resolves.
	tmpReal := t.TempDir()
	tmp := filepath.Join(t.TempDir(), "var-folders")
	if err := os.Symlink(tmpReal, tmp); err != nil {
		t.Fatal(err)
	}
	proj := filepath.Join(home, "src", "proj")
	s := &Spec{Argv: []string{"go", "test"}, Dir: proj, Writable: []string{proj}, Env: []string{"PATH=/usr/bin:/bin"}}
	s.View = testViewEnv(s.Env) // the policy's view, as darwin.go's callers build it
	p := buildMacProfile(macReadView(s, tmp, "/usr/bin/env"))
	sb, err := parseSBPL(p.Text, p.Params)
	if err != nil {
		t.Fatalf("profile does not parse: %v\n%s", err, p.Text)
	}
	h := func(rel string) string { return filepath.Join(home, rel) }
	for _, c := range []struct {
		op, path string
		allow    bool
	}{
		{"file-read-data", h(".ssh/id_ed25519"), false},
		{"file-read-metadata", h(".ssh/id_ed25519"), false},
		{"file-read-data", h(".aws/credentials"), false},
		{"file-read-data", h(".netrc"), false},
		{"file-read-data", h(".cargo/credentials.toml"), false},
		{"file-read-data", h(".local/state/ioh/traces.db"), false},
		{"file-read-data", h("notes.txt"), false},
		{"file-read-data", home, false},              // listing the home
		{"file-read-metadata", h("notes.txt"), true}, // stat only: path lookups need it
		{"file-read-data", h("go/pkg/mod/example.com/m@v1.0.0/m.go"), true},
		{"file-read-data", h(".cargo/registry/index/x"), true},
		{"file-read-data", h("src/proj/main.go"), true},
		{"file-read-data", "/usr/bin/env", true},
		{"file-read-data", "/dev/null", true},
		{"file-write-data", h("src/proj/main.go"), true},
		{"file-write-create", filepath.Join(tmpReal, "x"), true},
		{"file-read-data", filepath.Join(tmpReal, "x"), true},
		{"file-write-create", h("notes2.txt"), false},
		{"file-write-data", h(".ssh/id_ed25519"), false},
		{"file-write-create", "/usr/bin/x", false},
	} {
		if got := sb.allows(c.op, c.path); got != c.allow {
			t.Errorf("%s %s: allowed %v, want %v", c.op, c.path, got, c.allow)
		}
		if !c.allow && strings.HasPrefix(c.path, home+"/") {
			if _, err := os.ReadFile(c.path); err != nil && c.op != "file-write-create" {
				t.Errorf("control: %s is not readable outside the sandbox, so its case proves nothing: %v", c.path, err)
			}
		}
	}
}

// TestSBPLInterpreter checks the test's interpreter on the rules it
// relies on: the last matching rule wins, subpath is a path boundary,
// literal is exact, regex and parameters work, an unknown parameter is an
// error.
func TestSBPLInterpreter(t *testing.T) {
	sb, err := parseSBPL(`(version 1)
(allow default)
(deny file-read*)
(allow file-read* (subpath (param "A")) (literal "/x/y") (regex #"^/dev/fd/[0-9]+$"))
(deny file-read-data (subpath "/a/secret"))`, map[string]string{"A": "/a"})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		op, path string
		want     bool
	}{
		{"file-read-data", "/a", true}, {"file-read-data", "/a/b", true}, {"file-read-data", "/a-b", false},
		{"file-read-data", "/a/secret/k", false}, {"file-read-metadata", "/a/secret/k", true},
		{"file-read-data", "/x/y", true}, {"file-read-data", "/x/y/z", false}, {"file-read-data", "/dev/fd/3", true},
		{"file-write-data", "/anything", true},
	} {
		if got := sb.allows(c.op, c.path); got != c.want {
			t.Errorf("%s %s: %v, want %v", c.op, c.path, got, c.want)
		}
	}
	if _, err := parseSBPL(`(allow file-read* (subpath (param "NOPE")))`, nil); err == nil {
		t.Error("an undefined parameter was accepted")
	}
}

// sbpl is a parsed profile: its allow and deny rules in order.
type sbpl struct{ rules []sbplRule }

type sbplRule struct {
	allow   bool
	ops     []string
	filters []func(path string) bool // none: the rule applies to every path
}

// allows evaluates op on path: the last rule that matches decides.
func (p sbpl) allows(op, path string) bool {
	allowed := false
	for _, r := range p.rules {
		if r.matches(op, path) {
			allowed = r.allow
		}
	}
	return allowed
}

func (r sbplRule) matches(op, path string) bool {
	opOK := false
	for _, o := range r.ops {
		if o == "default" || o == op || (strings.HasSuffix(o, "*") && strings.HasPrefix(op, strings.TrimSuffix(o, "*"))) {
			opOK = true
		}
	}
	if !opOK {
		return false
	}
	if len(r.filters) == 0 {
		return true
	}
	for _, f := range r.filters {
		if f(path) {
			return true
		}
	}
	return false
}

// parseSBPL reads the subset of SBPL buildMacProfile writes: (version N),
// (allow|deny OP... FILTER...) with literal, subpath and regex filters
// whose argument is a string or (param "NAME"), and (target ...), which
// matches no path.
func parseSBPL(text string, params map[string]string) (sbpl, error) {
	toks, err := sbplTokens(text)
	if err != nil {
		return sbpl{}, err
	}
	var p sbpl
	for len(toks) > 0 {
		var form any
		if form, toks, err = sbplParse(toks); err != nil {
			return sbpl{}, err
		}
		l, ok := form.([]any)
		if !ok || len(l) == 0 {
			return sbpl{}, fmt.Errorf("top-level %v is not a form", form)
		}
		switch l[0] {
		case sym("version"):
			continue
		case sym("allow"), sym("deny"):
		default:
			return sbpl{}, fmt.Errorf("unknown form %v", l[0])
		}
		r := sbplRule{allow: l[0] == sym("allow")}
		for _, x := range l[1:] {
			switch x := x.(type) {
			case sym:
				r.ops = append(r.ops, string(x))
			case []any:
				f, err := sbplFilter(x, params)
				if err != nil {
					return sbpl{}, err
				}
				r.filters = append(r.filters, f)
			default:
				return sbpl{}, fmt.Errorf("unexpected %v in a rule", x)
			}
		}
		p.rules = append(p.rules, r)
	}
	return p, nil
}

func sbplFilter(f []any, params map[string]string) (func(string) bool, error) {
	if len(f) == 0 {
		return nil, fmt.Errorf("empty filter")
	}
	if f[0] == sym("target") {
		return func(string) bool { return false }, nil
	}
	if len(f) != 2 {
		return nil, fmt.Errorf("filter %v takes one argument", f)
	}
	var arg string
	switch a := f[1].(type) {
	case str:
		arg = string(a)
	case re:
		arg = string(a)
	case []any:
		if len(a) != 2 || a[0] != sym("param") {
			return nil, fmt.Errorf("filter argument %v", a)
		}
		name, ok := a[1].(str)
		v, defined := params[string(name)]
		if !ok || !defined {
			return nil, fmt.Errorf("undefined parameter %v", a[1])
		}
		arg = v
	default:
		return nil, fmt.Errorf("filter argument %v", f[1])
	}
	switch f[0] {
	case sym("literal"):
		return func(p string) bool { return p == arg }, nil
	case sym("subpath"):
		return func(p string) bool { return view.Under(p, arg) }, nil
	case sym("regex"):
		rx, err := regexp.Compile(arg)
		if err != nil {
			return nil, err
		}
		return rx.MatchString, nil
	}
	return nil, fmt.Errorf("unknown filter %v", f[0])
}

type (
	sym string // a symbol
	str string // a string literal
	re  string // a regex literal, #"..."
)

func sbplTokens(s string) ([]any, error) {
	var toks []any
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == ' ' || c == '\n' || c == '\t':
			i++
		case c == '(' || c == ')':
			toks = append(toks, c)
			i++
		case c == '"' || (c == '#' && i+1 < len(s) && s[i+1] == '"'):
			start := i
			if c == '#' {
				i++
			}
			j := i + 1
			for j < len(s) && s[j] != '"' {
				if s[j] == '\\' {
					j++
				}
				j++
			}
			if j >= len(s) {
				return nil, fmt.Errorf("unterminated string at %d", start)
			}
			if c == '#' {
				toks = append(toks, re(s[i+1:j]))
			} else {
				v, err := strconv.Unquote(s[i : j+1])
				if err != nil {
					return nil, fmt.Errorf("string at %d: %w", start, err)
				}
				toks = append(toks, str(v))
			}
			i = j + 1
		default:
			j := i
			for j < len(s) && !strings.ContainsRune(" \n\t()\"", rune(s[j])) {
				j++
			}
			toks = append(toks, sym(s[i:j]))
			i = j
		}
	}
	return toks, nil
}

func sbplParse(toks []any) (any, []any, error) {
	if len(toks) == 0 {
		return nil, nil, fmt.Errorf("unexpected end")
	}
	if toks[0] != byte('(') {
		if toks[0] == byte(')') {
			return nil, nil, fmt.Errorf("unbalanced )")
		}
		return toks[0], toks[1:], nil
	}
	var l []any
	toks = toks[1:]
	for {
		if len(toks) == 0 {
			return nil, nil, fmt.Errorf("unbalanced (")
		}
		if toks[0] == byte(')') {
			return l, toks[1:], nil
		}
		var x any
		var err error
		if x, toks, err = sbplParse(toks); err != nil {
			return nil, nil, err
		}
		l = append(l, x)
	}
}
