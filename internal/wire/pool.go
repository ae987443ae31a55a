package wire

import "github.com/ioh-lsp/ioh-lsp/internal/sandbox"

// enginePool is the sandbox pool of one engine's runs: shared, the
// caller's (it closes it), or else the engine's own, which release
// closes: that kills the stages waiting and removes what was made ahead
// for a next run that will not come (the landlock tier's spare private
// directory, the spare cgroups), so a finished `ioh-lsp run` leaves none
// of them behind.
func enginePool(shared *sandbox.Pool) (p *sandbox.Pool, release func()) {
	if shared != nil {
		return shared, func() {}
	}
	p = sandbox.NewPool()
	return p, p.Close
}
