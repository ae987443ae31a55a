//go:build unix

package regfile

import "syscall"

// nonblock opens a FIFO without waiting for a writer; regular files are
// unaffected.
const nonblock = syscall.O_NONBLOCK
