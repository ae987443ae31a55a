//go:build !linux && !darwin && !freebsd && !netbsd && !openbsd

package main

import "io"

// isTerminal: no terminal is detected here; bare ioh-lsp serves.
func isTerminal(io.Reader) bool { return false }
