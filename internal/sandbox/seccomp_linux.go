package sandbox

import (
	"fmt"

	"github.com/ioh-lsp/ioh-lsp/internal/sandbox/internal/seccomp"
)

// applySeccomp loads the filter on the calling thread (which then execs
// the command). no_new_privs is already set.
func applySeccomp(o seccomp.Options) (Mechanism, error) {
	if !seccomp.Supported() {
		return Mechanism{"seccomp", StateUnavailable, "kernel has no seccomp filter support"}, nil
	}
	f, err := seccomp.Build(o)
	if err != nil {
		return Mechanism{}, err
	}
	if err := f.Load(); err != nil {
		return Mechanism{}, fmt.Errorf("load seccomp filter: %w", err)
	}
	return Mechanism{"seccomp", StateApplied, f.Summary}, nil
}
