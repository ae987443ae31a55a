//go:build !unix

package regfile

// nonblock is 0 where opening a named pipe does not block the way a unix
// FIFO does.
const nonblock = 0
