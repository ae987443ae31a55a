package policy

import (
	"path"
	"strings"
	"testing"
)

var acts = []Act{ActRead, ActWrite, ActExec, ActNet}

// FuzzPolicy checks that matching never panics and that a deny always beats
// an allow of the same pattern, whatever the layers' order: the deny side
// matches loosely, the allow side strictly, so where the allow matches the
// deny does too.
func FuzzPolicy(f *testing.F) {
	seeds := [][3]string{
		{"0", ".git/**", ".GIT/config"},
		{"1", "!{a/**,b/**}", "c/x"},
		{"2", "go test *", "go test -exec x ./..."},
		{"2", "go ** -exec *", "/usr/bin/go test -exec x"},
		{"3", "*.example.com:44?", "A.example.com:443"},
		{"3", "[::1]:80", "[::1]:80"},
		{"2", `a\`, "a"},
		{"0", "**/[!a]*", "x/b"},
	}
	for _, s := range seeds {
		f.Add(s[0][0]-'0', s[1], s[2])
	}
	f.Fuzz(func(t *testing.T, a uint8, pattern, subject string) {
		act := acts[int(a)%len(acts)]
		deny := LayerRules{Layer: LayerUser, Rules: []Rule{{Act: act, Effect: Deny, Pattern: pattern}}}
		allow := LayerRules{Layer: LayerRemembered, Rules: []Rule{{Act: act, Effect: Allow, Pattern: pattern}}}
		p, err := New(deny, allow)
		if err != nil {
			return // invalid patterns are refused, not matched
		}
		verdicts := []Verdict{p.Check(act, subject)}
		if act == ActWrite {
			verdicts = append(verdicts, p.CheckWrite(subject, strings.ToUpper(subject)))
		}
		for _, v := range verdicts {
			if v.Effect == Allow && v.Rule != nil {
				t.Fatalf("%s %q on %q: allowed (%s) although the same pattern is denied", act, pattern, subject, v.Reason)
			}
		}
		q, _ := New(allow, deny)
		if v := q.Check(act, subject); v.Effect == Allow && v.Rule != nil {
			t.Fatalf("reversed layers: %s %q on %q allowed", act, pattern, subject)
		}
	})
}

// FuzzToken compares the argv/host token glob with path.Match where their
// syntaxes agree (no "/", no "!" or "^" negation), and checks it never panics.
func FuzzToken(f *testing.F) {
	for _, s := range [][2]string{{"a*b", "axxb"}, {"[a-c]?", "bz"}, {`\*x`, "*x"}, {"[!x]*", "yy"}, {"*a*a*a*", "aaaa"}} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, p, s string) {
		got := matchToken(p, s)
		if strings.ContainsAny(p+s, "/^!") || validateToken(p) != nil {
			return
		}
		want, err := path.Match(p, s)
		if err != nil {
			return
		}
		if got != want {
			t.Fatalf("matchToken(%q, %q) = %v, path.Match = %v", p, s, got, want)
		}
	})
}
