//go:build linux || darwin || freebsd || netbsd || openbsd

package approve

import "golang.org/x/sys/unix"

// TerminalsKnown: terminals are detected on this system.
const TerminalsKnown = true

// isTerminal: fd has terminal attributes (tcgetattr succeeds).
func isTerminal(fd uintptr) bool {
	_, err := unix.IoctlGetTermios(int(fd), termiosReq)
	return err == nil
}
