// Package suggest finds the name a typo was meant to be: the "did you
// mean" of unknown commands, flags, configuration keys and contract
// fields.
package suggest

// Nearest is the candidate nearest to s by edit distance, when it is
// near enough to be a typo (at most a third of s's length, at least 1);
// "" otherwise.
func Nearest(s string, candidates []string) string {
	best, bestD := "", len(s)/3+1
	for _, c := range candidates {
		if d := Distance(s, c); d < bestD || (d == bestD && best == "" && d <= 2) {
			best, bestD = c, d
		}
	}
	return best
}

// Distance is the Levenshtein distance of a and b.
func Distance(a, b string) int {
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
