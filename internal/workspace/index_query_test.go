package workspace

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// holds evaluates q on the trigram set of text.
func holds(q *tquery, text string) bool {
	set := map[trigram]bool{}
	for i := 0; i+3 <= len(text); i++ {
		set[packTrigram(text[i], text[i+1], text[i+2])] = true
	}
	post := func(t trigram) ([]uint32, error) {
		if set[t] {
			return []uint32{0}, nil
		}
		return nil, nil
	}
	r := q.eval(post)
	return r.all || len(r.ids) > 0
}

// TestTrigramQueryIsNecessary checks the index's one promise on random
// patterns and lines: whenever a line matches, its text satisfies the
// pattern's trigram query (so no matching file is ever ruled out), and
// the query does rule out some lines (it is not trivially true).
func TestTrigramQueryIsNecessary(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	atoms := []string{"err", "Parse", "nil", "EOF", "ünï", "K", "k", "s", "ſ", "\u212a", "x y", "\xff", "(", "a"}
	patterns := []GrepOptions{
		{Pattern: "ParseDuration"}, {Pattern: "parse", IgnoreCase: true}, {Pattern: "kelvin", IgnoreCase: true},
		{Pattern: `err|nil`}, {Pattern: `(Parse|EOF)+x`}, {Pattern: `func \w+Parse\w*\(`}, {Pattern: "ünïk", IgnoreCase: true},
		{Pattern: `\x{fffd}err`}, {Pattern: "errnil", Literal: true}, {Pattern: `Par(se)?EOF`}, {Pattern: `(?i)ERR nil`},
		{Pattern: `a{2,}ſss`, IgnoreCase: true}, {Pattern: "x y"},
	}
	ruledOut := 0
	for _, o := range patterns {
		m, err := compileGrep(o)
		if err != nil {
			t.Fatal(err)
		}
		for range 3000 {
			var b strings.Builder
			for range rng.IntN(8) {
				a := atoms[rng.IntN(len(atoms))]
				if rng.IntN(2) == 0 {
					a = strings.ToUpper(a)
				}
				b.WriteString(a)
			}
			line := b.String()
			if m.re.MatchString(line) && !holds(m.tq, line) {
				t.Fatalf("pattern %+v matches %q but its trigram query rules the line out", o, line)
			}
			if !holds(m.tq, line) {
				ruledOut++
			}
		}
	}
	if ruledOut == 0 {
		t.Error("no line was ever ruled out: the queries carry no information")
	}
}
