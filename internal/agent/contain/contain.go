// Package contain declares what the agent needs from a sandbox: run an argv
// or a shell line over the workspace with a change set staged on top,
// contained. The agent consumes this interface; internal/sandboxexec
// implements it with package sandbox, which the agent never imports, and
// internal/wire gives the harness that implementation (docs/architecture.md#layers).
package contain

import (
	"context"
	"io"
	"time"

	"github.com/ioh-lsp/ioh-lsp/internal/workspace"
)

// MaxTimeout is the longest wall time the agent gives one contained
// command: the cap of a Request that names none, of the run tool's
// timeout, and the default of a verification check's (contract).
const MaxTimeout = 10 * time.Minute

// Sandbox runs commands contained. Implementations are safe for concurrent
// use.
type Sandbox interface {
	Exec(ctx context.Context, req *Request) (*Result, error)
}

// Request is one contained command.
type Request struct {
	// Argv to run, or Shell for a line given to /bin/sh -c. Exactly one.
	Argv  []string
	Shell string
	// Root is the workspace's absolute directory; Dir the working directory
	// relative to it ("" for the root).
	Root string
	Dir  string
	// Changes are staged over the workspace (its read-only lower layer), so
	// the command sees workspace ⊕ change set. Nil: the bare workspace.
	// Writes the command makes go to a private layer and are discarded.
	Changes []workspace.Change
	// Network gives the command the whole host network. NetProxy, with
	// Network off, gives it a network that reaches only that proxy (an
	// Egress's): a sandbox that cannot confine it so refuses the run.
	Network  bool
	NetProxy *NetProxy
	// Timeout is the wall cap; 0 means MaxTimeout.
	Timeout time.Duration
	// Withheld are workspace files (slash paths relative to Root) the
	// command must not read: the read policy denies or asks about them
	// and nothing allows them in this run (Withheld). Inside they are
	// empty, and a mechanism names them.
	Withheld []string
	// OutputLimit caps the combined stdout+stderr kept in Result.Output:
	// past it the first and the last half are kept, with a line saying how
	// many bytes were left out between them; the command runs on. 0:
	// default.
	OutputLimit int64
	// Stream, when set, receives all of the combined output as it comes
	// (up to the sandbox's runaway cap of a gigabyte): test evidence read
	// from it is exact for a suite of any size.
	Stream io.Writer
}

// Result is what happened.
type Result struct {
	ExitCode int
	Signal   string // "" unless killed by a signal
	// CapHit names the cap that ended the run: wall, cpu, memory,
	// processes, output (a runaway writer, past a gigabyte); "" when none.
	CapHit    string
	Output    []byte // combined stdout and stderr, bounded
	Truncated bool
	Backend   string // the backend (tier) that actually applied
	// Downgrade says why stronger tiers were passed over ("" when none
	// was): "linux: user namespaces unavailable: …".
	Downgrade string
	// Mechanisms are the protections and whether each applied.
	Mechanisms []Mechanism
	Duration   time.Duration
}

// Mechanism is one protection of a run and its state: applied,
// unavailable or failed.
type Mechanism struct {
	Name   string `json:"name"`
	State  string `json:"state"`
	Detail string `json:"detail,omitempty"`
}

// Containment is one line naming the tier that ran the command and, when
// it is a downgrade, why the stronger tiers did not: what a `run` result
// and a check's evidence show the model and the user.
func (r *Result) Containment() string {
	if r.Backend == "" {
		return "sandbox: unknown tier"
	}
	if r.Downgrade == "" {
		return "sandbox: " + r.Backend + " tier"
	}
	return "sandbox: " + r.Backend + " tier (downgraded; " + r.Downgrade + ")"
}

// MechanismReadPolicy names the mechanism that says which workspace files
// were withheld from the command (Request.Withheld).
const MechanismReadPolicy = "read-policy"

// WithheldNote is what the command was not let read (the read-policy
// mechanism's detail), "" when nothing was withheld.
func (r *Result) WithheldNote() string {
	for _, m := range r.Mechanisms {
		if m.Name == MechanismReadPolicy {
			return m.Detail
		}
	}
	return ""
}

// Passed reports a clean exit with the given expected code.
func (r *Result) Passed(expect int) bool {
	return r.Signal == "" && r.CapHit == "" && r.ExitCode == expect
}
