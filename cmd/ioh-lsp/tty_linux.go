//go:build linux

package main

import (
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// isTerminal reports whether r is a terminal (a person typing, not an
// editor's pipe).
func isTerminal(r io.Reader) bool {
	f, ok := r.(*os.File)
	if !ok {
		return false
	}
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	return err == nil
}
