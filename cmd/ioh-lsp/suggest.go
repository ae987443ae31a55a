package main

import (
	"flag"
	"fmt"
	"strings"
)

// suggest is the candidate nearest to s by edit distance, when it is
// near enough to be a typo (at most a third of s's length, at least 1);
// "" otherwise.
func suggest(s string, candidates []string) string {
	best, bestD := "", len(s)/3+1
	for _, c := range candidates {
		if d := editDistance(s, c); d < bestD || (d == bestD && best == "" && d <= 2) {
			best, bestD = c, d
		}
	}
	return best
}

// editDistance is the Levenshtein distance of a and b.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// didYouMeanFlag adds "did you mean --X?" to the flag package's "flag
// provided but not defined: -x" when fs has a flag near x.
func didYouMeanFlag(fs *flag.FlagSet, err error) error {
	const undefined = "flag provided but not defined: "
	msg := err.Error()
	if !strings.HasPrefix(msg, undefined) {
		return err
	}
	name := strings.TrimLeft(strings.TrimPrefix(msg, undefined), "-")
	var names []string
	fs.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
	if s := suggest(name, names); s != "" {
		return fmt.Errorf("unknown flag --%s; did you mean --%s?", name, s)
	}
	return fmt.Errorf("unknown flag --%s (ioh-lsp %s --help lists the flags)", name, commandOf(fs.Name()))
}

// commandOf is a flag set's command without its positionals ("run FILE"
// → "run", "sandbox run" stays).
func commandOf(name string) string {
	var words []string
	for _, w := range strings.Fields(name) {
		if strings.ToUpper(w) == w {
			break
		}
		words = append(words, w)
	}
	return strings.Join(words, " ")
}
