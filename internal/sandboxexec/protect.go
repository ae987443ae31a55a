package sandboxexec

import (
	"fmt"
	"path/filepath"

	"github.com/ioh-lsp/ioh-lsp/internal/workspace"
)

// HostRunProtected returns what must stay read-only inside the writable
// roots beyond the sandbox's built-in protected directories, for
// sandbox.Spec.Protected: for each root, the paths its git configuration
// makes the host run or read later (workspace.HostRunPaths: the
// configured hooks directory, the included configuration files, .husky,
// .githooks, …), absolute. The error names a root whose configuration
// could not be read whole; the paths found are returned with it.
func HostRunProtected(writable []string) ([]string, error) {
	var out []string
	var firstErr error
	for _, w := range writable {
		// As the sandbox names the root: absolute, symlinks resolved.
		if abs, err := filepath.Abs(w); err == nil {
			w = abs
		}
		if real, err := filepath.EvalSymlinks(w); err == nil {
			w = real
		}
		rels, err := workspace.HostRunPaths(w)
		if err != nil && firstErr == nil {
			firstErr = fmt.Errorf("protect %s: %w", w, err)
		}
		for _, r := range rels {
			out = append(out, filepath.Join(w, filepath.FromSlash(r)))
		}
	}
	return out, firstErr
}
