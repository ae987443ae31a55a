//go:build darwin || freebsd || netbsd || openbsd

package approve

import "golang.org/x/sys/unix"

// termiosReq reads a terminal's attributes (tcgetattr).
const termiosReq = unix.TIOCGETA
