package policy

import (
	"errors"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/bmatcuk/doublestar/v4"
)

func TestCheckPathGlob(t *testing.T) {
	good := []string{"src/**", "./src/**", "docs/a,**", "src/{a,b}/*.go", "[a-z]*.txt", `a\,b`, "a..b/c", "**/.env*", "[!.]*", "x/[^-]"}
	for _, g := range good {
		if err := CheckPathGlob(g); err != nil {
			t.Errorf("CheckPathGlob(%q) = %v, want nil", g, err)
		}
	}
	bad := map[string]string{
		"../outside/**":       `".."`,
		"src/../x":            `".."`,
		"{src/**,../x/**}":    `".."`,
		`a/\.\./b`:            `".."`,
		"/etc/**":             "workspace-relative",
		"{src/**,/etc/**}":    `starts with "/"`,
		"{a":                  "not a valid glob",
		"a}":                  "not a valid glob",
		"a[b":                 "not a valid glob",
		"[z-a]":               "inverted range",
		"x/[0-9a-Z]":          "inverted range",
		`a\`:                  "not a valid glob",
		"  ":                  "is empty",
		"a\x00b":              "NUL",
		"[]":                  "not a valid glob",
		"ok/{x,y}/{..,z}/**":  `".."`,
		"{./x,y}":             "",
		"{x,y}/../../etc/**":  `".."`,
		"{src,{docs,/etc}}/x": `starts with "/"`,
	}
	delete(bad, "{./x,y}") // "./x" inside an alternative is an odd but relative spelling
	for g, want := range bad {
		err := CheckPathGlob(g)
		if err == nil {
			t.Errorf("CheckPathGlob(%q) = nil, want an error about %s", g, want)
			continue
		}
		if !strings.Contains(err.Error(), want) {
			t.Errorf("CheckPathGlob(%q) = %v, want it to mention %s", g, err, want)
		}
		// The rule compiler refuses exactly what the check refuses.
		if _, err := New(LayerRules{Layer: LayerUser, Rules: []Rule{rule(ActWrite, Deny, g)}}); !errors.Is(err, ErrInvalidRule) {
			t.Errorf("New with pattern %q: %v, want ErrInvalidRule", g, err)
		}
	}
}

// TestScopeRuleEntriesStayAlternatives is QA's widening repro: with
// "docs/a,**" the joined alternation used to read as {src/**,docs/a,**}
// and "**" let the agent write top.txt.
func TestScopeRuleEntriesStayAlternatives(t *testing.T) {
	p := mustNew(t, Builtin(nil), ScopeRule([]string{"src/**", "docs/a,**"}))
	for path, want := range map[string]Effect{
		"top.txt":          Deny,
		"docs/b.md":        Deny,
		"other/a,x":        Deny,
		"src/main.go":      Allow,
		"docs/a,notes.txt": Allow,
	} {
		if v := p.Check(ActWrite, path); v.Effect != want {
			t.Errorf("write %s: %s (layer %s), want %s", path, v.Effect, v.Layer, want)
		}
	}
	// A scope entry with its own alternation keeps it.
	p = mustNew(t, Builtin(nil), ScopeRule([]string{"src/{a,b}/**", "README.md", "x[,}]y"}))
	for path, want := range map[string]Effect{
		"src/a/f.go": Allow, "src/b/f.go": Allow, "README.md": Allow, "x,y": Allow, "x}y": Allow,
		"src/c/f.go": Deny, "xy": Deny, "top.txt": Deny,
	} {
		if v := p.Check(ActWrite, path); v.Effect != want {
			t.Errorf("write %s: %s (layer %s), want %s", path, v.Effect, v.Layer, want)
		}
	}
}

// TestScopeRuleRefusesBadEntries: an entry CheckPathGlob refuses makes the
// layer fail to compile, naming the entry, however the others look; the
// control is the same scope without the bad entry.
func TestScopeRuleRefusesBadEntries(t *testing.T) {
	for _, bad := range []string{"../outside/**", "/etc/**", "{a", "a[b", "[z-a]"} {
		_, err := New(Builtin(nil), ScopeRule([]string{"src/**", bad}))
		if !errors.Is(err, ErrInvalidRule) || !strings.Contains(err.Error(), bad) {
			t.Errorf("scope [src/** %s]: %v, want ErrInvalidRule naming the entry", bad, err)
		}
	}
	// Two halves of an alternation, each invalid alone, do not combine.
	if _, err := New(ScopeRule([]string{"{a", "b}"})); !errors.Is(err, ErrInvalidRule) {
		t.Errorf(`scope ["{a" "b}"]: %v, want ErrInvalidRule`, err)
	}
	if _, err := New(Builtin(nil), ScopeRule([]string{"src/**", "docs/**"})); err != nil {
		t.Fatalf("control: %v", err)
	}
}

// TestEscapeAlternativeKeepsMeaning checks on random globs and paths that
// a path matches the joined alternation exactly when it matches one of
// the globs alone.
func TestEscapeAlternativeKeepsMeaning(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	pieces := []string{"a", "b", ",", "*", "**", "/", "?", "{a,b}", "{,x}", "[,}]", "[a-b]", `\,`, `\}`, `\{`, ".", "x"}
	chars := "ab,x}{./"
	gen := func() string {
		var b strings.Builder
		for n := 1 + r.IntN(5); n > 0; n-- {
			b.WriteString(pieces[r.IntN(len(pieces))])
		}
		return b.String()
	}
	checked := 0
	for range 3000 {
		var globs []string
		for len(globs) < 2+r.IntN(2) {
			if g := gen(); CheckPathGlob(g) == nil {
				globs = append(globs, g)
			}
		}
		alts := make([]string, len(globs))
		for i, g := range globs {
			alts[i] = escapeAlternative(g)
		}
		joined := "{" + strings.Join(alts, ",") + "}"
		if !doublestar.ValidatePattern(joined) {
			t.Fatalf("globs %q joined to invalid %q", globs, joined)
		}
		for range 20 {
			var pb strings.Builder
			for n := 1 + r.IntN(6); n > 0; n-- {
				pb.WriteByte(chars[r.IntN(len(chars))])
			}
			path := pb.String()
			want := false
			for _, g := range globs {
				if ok, _ := doublestar.Match(g, path); ok {
					want = true
				}
			}
			if got, _ := doublestar.Match(joined, path); got != want {
				t.Fatalf("path %q: joined %q matches %v, globs %q alone %v", path, joined, got, globs, want)
			}
			checked++
		}
	}
	t.Logf("%d glob sets x paths checked", checked)
}
