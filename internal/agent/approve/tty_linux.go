//go:build linux

package approve

import "golang.org/x/sys/unix"

// termiosReq reads a terminal's attributes (tcgetattr).
const termiosReq = unix.TCGETS
