//go:build unix

package sandbox

// macReadView is a macOS run's view, from the same computation as the
// Linux tiers' read view (readview.go): macOS's system directories, the
// working directory, the writable roots (tmp, the run's private temp
// directory, among them) and the staged workspace, the toolchains and
// their caches, the directories on PATH, Spec.Readable and the extra
// paths (the program sandbox-exec starts); denied, as there, the masks,
// /etc's secrets and this program's own state and config. Denied and
// writable paths are named also as they resolve (Seatbelt matches
// resolved paths: /etc is /private/etc, the temp dir under /var is under
// /private/var); the read view's roots are resolved already.
func macReadView(s *Spec, tmp string, extra ...string) macView {
	writable := append([]string{tmp}, s.Writable...)
	readable := append(append([]string{}, s.Readable...), extra...)
	read, _ := readViewRootsOver(macSystemReadView, &Spec{Dir: s.Dir, Writable: writable, Stage: s.Stage, Env: s.Env, Readable: readable})
	return macView{Read: read, Deny: minimalCover(withResolved(append(readViewDeny(maskTargets(s.Masked)), toolchainSecrets(toolchainDirs(s.Env))...))), Writable: withResolved(writable), Network: s.Network}
}

// withResolved is ps with, after each, the path it resolves to where that
// differs: macOS's temporary directories are under /var, a link to
// /private/var, and Seatbelt matches the resolved path.
func withResolved(ps []string) []string {
	var out []string
	for _, p := range ps {
		out = append(out, p)
		if r := resolved(p); r != "" {
			out = append(out, r)
		}
	}
	return out
}
