// Package last picks the end of a slice.
package last

// Last returns the last n elements of xs (all of them when n is larger).
func Last(xs []string, n int) []string {
	if n > len(xs) {
		n = len(xs)
	}
	return xs[len(xs)-n+1:]
}
