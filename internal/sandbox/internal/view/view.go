// Package view holds the one value a sandbox policy hands the mechanism:
// what a run may read of the host. Package internal/sandbox/policy builds
// the product's (policy.Default); internal/sandbox applies it as is
// (sandbox.View is this type). It is a package of its own so that neither
// side imports the other. It also holds the path algebra both sides use
// on a view's lists (paths.go, links.go: Under, MinimalCover, Carve,
// ResolveRoots, Resolved, Existing, CarvedWithin and the symlink checks
// of a cached view), so that the policy's check and the mechanism's
// action are one function. It imports nothing of the module.
package view

// View is what one run may see of the host besides its own working
// directory, writable roots and staged workspace, which the Spec names.
// Deny by default: the zero View reads nothing else (no system
// directory, no toolchain) and masks nothing; what the host runs code
// from (HostRunNames) stays read-only in every writable root whatever
// the view says.
type View struct {
	// Read are the host paths (directories or files, absolute) the
	// command may read. The tiers bind (linux), allow (landlock) or
	// permit (macos) exactly these; missing ones are skipped.
	Read []string
	// Masked are the host paths hidden even where Read or a writable
	// root holds them (absolute). A symlink's target is not followed:
	// list it too (policy.Default does).
	Masked []string
	// ProtectedNames are paths relative to every writable root that stay
	// read-only in it, besides HostRunNames, unless that exact path is
	// itself a writable root.
	ProtectedNames []string
}

// HostRunNames stay read-only inside every writable root of every run
// unless that exact directory is itself a writable root: what is written
// there runs on the host later (git hooks and core.fsmonitor, the agent's
// own configuration, editor tasks, CI workflows). The mechanism protects
// them whatever a view's ProtectedNames say, so a hand-built or zero
// View cannot leave them writable. docs/policy.md#protected-paths lists
// the same built-in protected paths for the agent's tools.
var HostRunNames = []string{".git", ".ioh", ".vscode", ".idea", ".github/workflows"}

// Merge appends to a the paths of b that a does not hold, each once: the
// mechanism adds its own masks to a view's this way, the policy its
// lists to one another.
func Merge(a, b []string) []string {
	seen := make(map[string]bool, len(a))
	for _, p := range a {
		seen[p] = true
	}
	for _, p := range b {
		if !seen[p] {
			seen[p] = true
			a = append(a, p)
		}
	}
	return a
}
