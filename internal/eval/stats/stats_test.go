package stats

import (
	"math"
	"testing"

	"github.com/ioh-lsp/ioh-lsp/internal/eval/result"
)

func near(a, b float64) bool { return math.Abs(a-b) < 5e-5 }

// TestWilson against values computed by hand (p̂ = k/n, z = 1.96):
// centre (p̂ + z²/2n)/(1 + z²/n), half-width z·√(p̂(1-p̂)/n + z²/4n²)/(1 + z²/n).
func TestWilson(t *testing.T) {
	for _, c := range []struct {
		k, n   int
		lo, hi float64
	}{
		{8, 10, 0.4902, 0.9433},
		{0, 10, 0, 0.2775},
		{10, 10, 0.7225, 1},
		{5, 10, 0.2366, 0.7634},
		{1, 1, 0.2065, 1},
		{0, 0, 0, 1},
	} {
		lo, hi := Wilson(c.k, c.n, Z95)
		if !near(lo, c.lo) || !near(hi, c.hi) {
			t.Errorf("Wilson(%d, %d) = %.4f–%.4f, want %.4f–%.4f", c.k, c.n, lo, hi, c.lo, c.hi)
		}
	}
}

// TestMcNemarExact against binomial sums by hand: p = 2·Σ_{i≤min} C(n,i)/2ⁿ.
func TestMcNemarExact(t *testing.T) {
	for _, c := range []struct {
		b, c int
		p    float64
	}{
		{6, 1, 0.125},        // 2·(1+7)/128
		{0, 5, 0.0625},       // 2·1/32
		{3, 3, 1},            // 2·42/64 > 1
		{10, 2, 0.038574},    // 2·(1+12+66)/4096
		{0, 0, 1},            // no discordant pair
		{1, 0, 1},            // 2·1/2
		{20, 0, 1.907349e-6}, // 2/2²⁰
	} {
		if got := McNemarExact(c.b, c.c); math.Abs(got-c.p) > 1e-4*c.p {
			t.Errorf("McNemarExact(%d, %d) = %g, want %g", c.b, c.c, got, c.p)
		}
	}
}

func cell(task, variant string, repeat int, verified bool, cost float64, tokens int64) result.Cell {
	return result.Cell{Task: task, Variant: variant, Repeat: repeat, Verified: verified, CostUSD: cost,
		Tokens: result.Tokens{Total: tokens}, Steps: 2, WallMS: 1000, Outcome: "verified"}
}

// TestSummarise: figures of a small evaluation worked out by hand.
func TestSummarise(t *testing.T) {
	cells := []result.Cell{
		cell("t1", "a", 1, true, 0.10, 1000), cell("t1", "b", 1, false, 0.30, 3000),
		cell("t2", "a", 1, true, 0.20, 2000), cell("t2", "b", 1, true, 0.40, 4000),
		cell("t3", "a", 1, false, 0.30, 3000), cell("t3", "b", 1, false, 0.20, 2000),
		cell("t4", "a", 1, true, 0.40, 4000), // b did not run t4: not a pair
	}
	s := Summarise(cells, []string{"b", "a"})
	if len(s.Variants) != 2 || s.Variants[0].Name != "b" || len(s.Tasks) != 4 {
		t.Fatalf("summary %+v", s)
	}
	a, b := s.Variants[1], s.Variants[0]
	// a: 3 of 4 verified; cost 1.00/4 = 0.25 a task; solved 0.70/3.
	if a.Cells != 4 || a.Passed != 3 || !near(a.Pass, 0.75) || !near(a.CostPerTask, 0.25) || !near(a.CostPerSolved, 0.7/3) || !near(a.TokensPerTask, 2500) || !near(a.TokensPerSolved, 7000.0/3) {
		t.Errorf("a %+v", a)
	}
	lo, hi := Wilson(3, 4, Z95)
	if a.Lo != lo || a.Hi != hi {
		t.Errorf("a's interval %v–%v", a.Lo, a.Hi)
	}
	if b.Passed != 1 || !near(b.CostPerTask, 0.3) || !near(b.CostPerSolved, 0.4) {
		t.Errorf("b %+v", b)
	}
	p := s.Pairs[0]
	if p.A != "b" || p.B != "a" || p.Pairs != 3 || p.Both != 1 || p.OnlyA != 0 || p.OnlyB != 1 || p.Neither != 1 || !near(p.P, 1) {
		t.Errorf("pair %+v", p)
	}
	if got := s.PerTask["t1"]["a"]; got != [2]int{1, 1} {
		t.Errorf("per task %v", got)
	}
}
