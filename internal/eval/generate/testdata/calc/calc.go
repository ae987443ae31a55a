// Package calc is a small library with tests: the generator's test
// repository (eval/generate).
package calc

import "strings"

// Max returns the larger of a and b.
func Max(a, b int) int {
	if a > b {
		return a
	}
	return b
}

// Sum adds xs.
func Sum(xs []int) int {
	total := 0
	for i := 0; i < len(xs); i++ {
		total += xs[i]
	}
	return total
}

// Sub returns a minus b.
func Sub(a, b int) int { return a - b }

// Between says whether lo <= x <= hi.
func Between(x, lo, hi int) bool {
	return x >= lo && x <= hi
}

// CountIf counts the elements of xs equal to v.
func CountIf(xs []string, v string) int {
	n := 0
	for _, x := range xs {
		if x == v {
			n++
		}
	}
	return n
}

// Repeat joins n copies of s with sep.
func Repeat(s, sep string, n int) string {
	if n <= 0 {
		return ""
	}
	parts := make([]string, 0, n)
	for i := 0; i < n; i++ {
		parts = append(parts, s)
	}
	return strings.Join(parts, sep)
}

// Window returns xs[from:to], clipped to xs.
func Window(xs []int, from, to int) []int {
	if from < 0 {
		from = 0
	}
	if to > len(xs) {
		to = len(xs)
	}
	if from >= to {
		return nil
	}
	return xs[from:to]
}

// Pow returns b to the power e (e ≥ 0).
func Pow(b, e int) int {
	r := 1
	for e > 0 {
		r *= b
		e--
	}
	return r
}

// untested has no test: the generator never mutates it.
func untested(a int) int {
	if a < 10 {
		return a + 1
	}
	return a
}
