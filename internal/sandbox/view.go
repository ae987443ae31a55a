package sandbox

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/ioh-lsp/ioh-lsp/internal/sandbox/internal/view"
)

// View is what a run may read of the host (View.Read), what stays hidden
// in that (View.Masked) and what stays read-only in every writable root
// (View.ProtectedNames, besides view.HostRunNames, which every run
// protects), besides the run's own working directory,
// writable roots and stage. A policy builds it (package
// internal/sandbox/policy: policy.Default is the product's; ioh.DefaultView
// for an embedder) and every tier applies exactly it: the mechanism adds
// no host path of its own but the minimal devices and, without network,
// hides /run and the host's listening sockets. The zero View is the bare
// view: a command there cannot even load /bin/sh.
type View = view.View

// cleanView checks that every path of v is absolute and returns a copy
// with them cleaned, so no caller's slice is shared with the run.
func cleanView(v View) (View, error) {
	var out View
	var err error
	if out.Read, err = cleanPaths("readable", v.Read); err != nil {
		return View{}, err
	}
	if out.Masked, err = cleanPaths("masked", v.Masked); err != nil {
		return View{}, err
	}
	for _, n := range v.ProtectedNames {
		c := filepath.Clean(n)
		if n == "" || filepath.IsAbs(n) || c == "." || c == ".." || strings.HasPrefix(c, "../") {
			return View{}, fmt.Errorf("%w: protected name %q is not a path inside a writable root", ErrBadSpec, n)
		}
		out.ProtectedNames = append(out.ProtectedNames, c)
	}
	return out, nil
}

// cleanPaths cleans ps, refusing one that is not absolute (what names
// the list in the error).
func cleanPaths(what string, ps []string) ([]string, error) {
	var out []string
	for _, p := range ps {
		if !filepath.IsAbs(p) {
			return nil, fmt.Errorf("%w: %s path %q is not absolute", ErrBadSpec, what, p)
		}
		out = append(out, filepath.Clean(p))
	}
	return out, nil
}

// protectedNamesIn are the names every run protects (view.HostRunNames)
// and the view's own protected names, inside each writable root: what
// both tiers keep read-only there (protectedIn).
func protectedNamesIn(names, writable []string) []string {
	all := view.Merge(slices.Clone(view.HostRunNames), names)
	var out []string
	for _, w := range writable {
		for _, n := range all {
			out = append(out, filepath.Join(w, n))
		}
	}
	return out
}

// ownRoots are the run's own roots: its working directory (as given and
// resolved), its writable roots (resolved by validate) and its stage's
// lower tree.
func (s *Spec) ownRoots() []string {
	own := append([]string{s.Dir}, s.Writable...)
	if real, err := filepath.EvalSymlinks(s.Dir); err == nil {
		own = append(own, real)
	}
	if s.Stage != nil {
		own = append(own, s.Stage.lower)
	}
	return own
}

// readOutsideOwnRoots drops the view's Read entries that lie in one of
// the run's own roots, as written, once resolved, or through any of
// their ancestors once that ancestor is resolved. Those are readable
// there already, and a command may write there: a toolchain directory
// the environment names inside the workspace (VIRTUAL_ENV=<workspace>/.venv,
// or the workspace through a link, /alias/ws/.venv with /alias -> /real)
// would otherwise let one run plant .venv/lib -> /anywhere and the next
// run's view follow the link to /anywhere. Inside an own root, a symlink
// is only a symlink: the command follows it within the view, never the
// mechanism.
func readOutsideOwnRoots(read, own []string) []string {
	var roots []string
	for _, r := range own {
		if r == "" || r == "/" {
			continue
		}
		roots = append(roots, r)
		if real, err := filepath.EvalSymlinks(r); err == nil && real != r {
			roots = append(roots, real)
		}
	}
	in := func(p string) bool {
		for _, r := range roots {
			if within(p, r) {
				return true
			}
		}
		return false
	}
	out := read[:0:0]
	for _, p := range read {
		if !reachesOwnRoot(filepath.Clean(p), in) {
			out = append(out, p)
		}
	}
	return out
}

// reachesOwnRoot reports whether p, or any of its ancestors once its
// symlinks are resolved, lies where in says: the path is walked from
// the root down, each prefix resolved in turn, so a link anywhere above
// p into an own root is caught as well as a link at p itself.
func reachesOwnRoot(p string, in func(string) bool) bool {
	if in(p) {
		return true
	}
	for a := p; ; a = filepath.Dir(a) {
		if real, err := filepath.EvalSymlinks(a); err == nil && in(real) {
			return true
		}
		if a == filepath.Dir(a) {
			return false
		}
	}
}

// viewKey is what a cache of a view's resolved or carved form depends on
// besides the file tree: the view itself.
func viewKey(v View) string { return keyOf(v.Read, v.Masked) } // pool.go

// trueView is the view of the tiers' probe (probeByRunning), which runs
// `true` and nothing else: the system directories that program and its
// libraries lie in. No Spec gets it; a run's view is its Spec's.
var trueView = View{Read: []string{"/usr", "/bin", "/lib", "/lib64"}}
