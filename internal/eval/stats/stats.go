// Package stats summarises an evaluation's cells: per variant pass@1 with
// a Wilson score interval, mean cost and tokens per task and per solved
// task, and a paired comparison of two variants on the same cells (exact
// McNemar, i.e. a two-sided sign test on the discordant pairs).
package stats

import (
	"math"
	"sort"

	"github.com/ioh-lsp/ioh-lsp/internal/eval/result"
)

// Z95 is the normal quantile of a two-sided 95% interval.
const Z95 = 1.959963984540054

// Wilson is the Wilson score interval of k successes in n trials at
// normal quantile z; (0, 1) when n is 0.
func Wilson(k, n int, z float64) (lo, hi float64) {
	if n == 0 {
		return 0, 1
	}
	p := float64(k) / float64(n)
	nf := float64(n)
	z2 := z * z
	den := 1 + z2/nf
	mid := (p + z2/(2*nf)) / den
	half := z * math.Sqrt(p*(1-p)/nf+z2/(4*nf*nf)) / den
	return math.Max(0, mid-half), math.Min(1, mid+half)
}

// McNemarExact is the two-sided exact McNemar p-value for b and c
// discordant pairs: under the null each discordant pair goes either way
// with probability ½, so p = min(1, 2·P(X ≤ min(b, c))) for X ~ Bin(b+c, ½).
// 1 when there is no discordant pair.
func McNemarExact(b, c int) float64 {
	n := b + c
	if n == 0 {
		return 1
	}
	k := min(b, c)
	// Sum C(n, i)/2^n for i ≤ k in log space (n may be large).
	sum := 0.0
	for i := 0; i <= k; i++ {
		sum += math.Exp(logChoose(n, i) - float64(n)*math.Ln2)
	}
	return math.Min(1, 2*sum)
}

func logChoose(n, k int) float64 {
	a, _ := math.Lgamma(float64(n + 1))
	b, _ := math.Lgamma(float64(k + 1))
	c, _ := math.Lgamma(float64(n - k + 1))
	return a - b - c
}

// Variant is one variant's figures.
type Variant struct {
	Name   string
	Cells  int
	Passed int
	// Pass is pass@1: the fraction of cells verified; Lo and Hi its 95%
	// Wilson interval (repeats count as trials).
	Pass, Lo, Hi float64
	// Errors counts cells that could not run at all.
	Errors int
	// Means per cell (a task run once) and over the verified cells alone
	// (0 when none passed).
	CostPerTask, CostPerSolved     float64
	TokensPerTask, TokensPerSolved float64
	StepsPerTask                   float64
	WallMSPerTask                  float64
	FailedEdits, VerifyRounds      int
	// Unpriced: some calls had no price, so costs are lower bounds.
	Unpriced bool
}

// Pair compares two variants on the cells both ran (same task and
// repeat).
type Pair struct {
	A, B string
	// Pairs is the number of matched cells; Both and Neither the
	// concordant ones; OnlyA and OnlyB the discordant ones.
	Pairs, Both, Neither, OnlyA, OnlyB int
	P                                  float64 // exact McNemar, two-sided
}

// Summary is the whole evaluation's figures.
type Summary struct {
	Tasks    []string // task ids, sorted
	Variants []Variant
	Pairs    []Pair
	// PerTask[task][variant] is the passed and run cells of a task.
	PerTask map[string]map[string][2]int
}

// Summarise computes the figures of cells; variants appear in the order
// given (then any others, sorted).
func Summarise(cells []result.Cell, order []string) Summary {
	byVariant := map[string][]result.Cell{}
	tasks := map[string]bool{}
	s := Summary{PerTask: map[string]map[string][2]int{}}
	for _, c := range cells {
		byVariant[c.Variant] = append(byVariant[c.Variant], c)
		tasks[c.Task] = true
		m := s.PerTask[c.Task]
		if m == nil {
			m = map[string][2]int{}
			s.PerTask[c.Task] = m
		}
		pt := m[c.Variant]
		if c.Verified {
			pt[0]++
		}
		pt[1]++
		m[c.Variant] = pt
	}
	for t := range tasks {
		s.Tasks = append(s.Tasks, t)
	}
	sort.Strings(s.Tasks)
	names := variantOrder(byVariant, order)
	for _, n := range names {
		s.Variants = append(s.Variants, variant(n, byVariant[n]))
	}
	for i := range names {
		for j := i + 1; j < len(names); j++ {
			s.Pairs = append(s.Pairs, pair(names[i], names[j], byVariant[names[i]], byVariant[names[j]]))
		}
	}
	return s
}

func variantOrder(by map[string][]result.Cell, order []string) []string {
	var names []string
	seen := map[string]bool{}
	for _, n := range order {
		if _, ok := by[n]; ok && !seen[n] {
			names, seen[n] = append(names, n), true
		}
	}
	var rest []string
	for n := range by {
		if !seen[n] {
			rest = append(rest, n)
		}
	}
	sort.Strings(rest)
	return append(names, rest...)
}

func variant(name string, cells []result.Cell) Variant {
	v := Variant{Name: name, Cells: len(cells)}
	var cost, tokens, solvedCost, solvedTokens, steps, wall float64
	for _, c := range cells {
		cost += c.CostUSD
		tokens += float64(c.Tokens.Total)
		steps += float64(c.Steps)
		wall += float64(c.WallMS)
		v.FailedEdits += c.FailedEdits
		v.VerifyRounds += c.VerifyRounds
		if c.Unpriced > 0 {
			v.Unpriced = true
		}
		if c.Outcome == "error" {
			v.Errors++
		}
		if c.Verified {
			v.Passed++
			solvedCost += c.CostUSD
			solvedTokens += float64(c.Tokens.Total)
		}
	}
	if v.Cells > 0 {
		n := float64(v.Cells)
		v.Pass = float64(v.Passed) / n
		v.CostPerTask, v.TokensPerTask, v.StepsPerTask, v.WallMSPerTask = cost/n, tokens/n, steps/n, wall/n
	}
	if v.Passed > 0 {
		v.CostPerSolved, v.TokensPerSolved = solvedCost/float64(v.Passed), solvedTokens/float64(v.Passed)
	}
	v.Lo, v.Hi = Wilson(v.Passed, v.Cells, Z95)
	return v
}

func pair(a, b string, ca, cb []result.Cell) Pair {
	p := Pair{A: a, B: b}
	type tr struct {
		task   string
		repeat int
	}
	passB := map[tr]bool{}
	inB := map[tr]bool{}
	for _, c := range cb {
		k := tr{c.Task, c.Repeat}
		inB[k], passB[k] = true, c.Verified
	}
	for _, c := range ca {
		k := tr{c.Task, c.Repeat}
		if !inB[k] {
			continue
		}
		p.Pairs++
		switch {
		case c.Verified && passB[k]:
			p.Both++
		case c.Verified:
			p.OnlyA++
		case passB[k]:
			p.OnlyB++
		default:
			p.Neither++
		}
	}
	p.P = McNemarExact(p.OnlyA, p.OnlyB)
	return p
}
