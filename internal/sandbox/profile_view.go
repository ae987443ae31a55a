//go:build unix

package sandbox

import "github.com/ioh-lsp/ioh-lsp/internal/sandbox/internal/view"

// macReadView is a macOS run's view, from the same computation as the
// Linux tiers' read view (readview.go): the Spec's View (the policy's
// macOS system directories, toolchains, readable paths), the working
// directory, the writable roots (tmp, the run's private temp directory,
// among them), the staged workspace and the extra paths (the program
// sandbox-exec starts); denied, the view's masks. Denied and writable
// paths are named also as they resolve (Seatbelt matches resolved paths:
// /etc is /private/etc, the temp dir under /var is under /private/var);
// the read view's roots are resolved already.
func macReadView(s *Spec, tmp string, extra ...string) macView {
	writable := append([]string{tmp}, s.Writable...)
	v := s.View
	v.Read = append(append([]string{}, v.Read...), extra...)
	read, _ := readViewRoots(&Spec{Dir: s.Dir, Writable: writable, Stage: s.Stage, View: v})
	return macView{Read: read, Deny: view.MinimalCover(withResolved(s.View.Masked)), Writable: withResolved(writable), Network: s.Network}
}

// withResolved is ps with, after each, the path it resolves to where that
// differs: macOS's temporary directories are under /var, a link to
// /private/var, and Seatbelt matches the resolved path.
func withResolved(ps []string) []string {
	var out []string
	for _, p := range ps {
		out = append(out, p)
		if r := view.Resolved(p); r != "" {
			out = append(out, r)
		}
	}
	return out
}
