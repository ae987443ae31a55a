// Package clamp bounds values.
package clamp

// Clamp returns x bounded to [lo, hi].
func Clamp(x, lo, hi int) int {
	if x < lo {
		return lo
	}
	if x < hi {
		return hi
	}
	return x
}
