//go:build !unix

package trace

// processExists cannot probe here, so a lease is honoured until it
// expires.
func processExists(pid int) bool { return true }
