// Package view holds the one value a sandbox policy hands the mechanism:
// what a run may read of the host. Package internal/sandbox/policy builds
// the product's (policy.Default); internal/sandbox applies it as is
// (sandbox.View is this type). It is a package of its own so that neither
// side imports the other.
package view

// View is what one run may see of the host besides its own working
// directory, writable roots and staged workspace, which the Spec names.
// Deny by default: the zero View reads nothing else (no system
// directory, no toolchain), masks nothing and protects nothing.
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
	// read-only in it (".git", ".github/workflows"), unless that exact
	// path is itself a writable root.
	ProtectedNames []string
}

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
