package approve

// Whether a file is a terminal (a person typing or reading): the approver
// must not prompt nobody, and the CLI's output must not colour a pipe.

// fder is an *os.File or anything else with a descriptor.
type fder interface{ Fd() uintptr }

// IsTerminal reports whether f is a terminal: false for a pipe, a regular
// file, /dev/null, or a value without a descriptor.
func IsTerminal(f any) bool {
	d, ok := f.(fder)
	return ok && isTerminal(d.Fd())
}
