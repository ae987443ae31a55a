package contain

import (
	"context"
	"io"
	"time"
)

// Spawner starts long-lived contained processes whose stdin and stdout
// the caller speaks to (an MCP server over stdio). It is optional: a
// Sandbox that also implements Spawner can host such servers; one that
// does not cannot, and they are refused rather than run uncontained.
type Spawner interface {
	Spawn(ctx context.Context, req *ProcessRequest) (*Process, error)
}

// ProcessRequest is one long-lived contained command.
type ProcessRequest struct {
	Argv []string
	// Dir is the absolute working directory; it joins the read view (it
	// is not writable). "" means a private empty directory.
	Dir string
	// Env adds KEY=VALUE entries after the sandbox's allow-listed
	// environment; secret-looking names are refused by the sandbox.
	Env []string
	// Readable paths join the read view (a server's install directory).
	Readable []string
	// Network gives the whole network; NetProxy, with Network off, only
	// that proxy (as Request's).
	Network  bool
	NetProxy *NetProxy
	// Lifetime caps the process's wall time; 0: the implementation's
	// default.
	Lifetime time.Duration
}

// Process is a started contained command. Close ends it.
type Process struct {
	// Stdin is the process's standard input; Stdout its standard output,
	// which reads EOF once the process is gone.
	Stdin  io.WriteCloser
	Stdout io.ReadCloser
	// Done is closed when the process has ended; Result is valid then.
	Done <-chan struct{}
	// Result reports how it ended (nil before Done), with its standard
	// error's last bytes as Output; Err is set when it never ran.
	Result func() (*Result, error)
	// Close kills the process (if still running) and waits for it.
	Close func() error
}
