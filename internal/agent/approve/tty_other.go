//go:build !linux && !darwin && !freebsd && !netbsd && !openbsd

package approve

// TerminalsKnown: terminals are not detected on this system (IsTerminal is
// always false); a caller that would otherwise refuse to prompt asks.
const TerminalsKnown = false

// isTerminal: no terminal is detected here, so nothing prompts or colours.
func isTerminal(uintptr) bool { return false }
