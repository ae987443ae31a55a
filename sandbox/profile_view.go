//go:build unix

package sandbox

// macReadView is a macOS run's view, from the same computation as the
// Linux tiers' read view (readview.go): macOS's system directories, the
// working directory, the writable roots (tmp, the run's private temp
// directory, among them) and the staged workspace, the toolchains and
// their caches, the directories on PATH, Spec.Readable and the extra
// paths (the program sandbox-exec starts); denied, as there, the masks,
// /etc's secrets and this program's own state and config, each also at
// the path it resolves to (Seatbelt matches resolved paths: /etc is
// /private/etc).
func macReadView(s *Spec, tmp string, extra ...string) macView {
	writable := append([]string{tmp}, s.Writable...)
	readable := append(append([]string{}, s.Readable...), extra...)
	read, _ := readViewRootsOver(macSystemReadView, &Spec{Dir: s.Dir, Writable: writable, Stage: s.Stage, Env: s.Env, Readable: readable})
	var deny []string
	for _, d := range readViewDeny(maskTargets(s.Masked)) {
		deny = append(deny, d)
		if r := resolved(d); r != "" {
			deny = append(deny, r)
		}
	}
	return macView{Read: read, Deny: minimalCover(deny), Writable: writable, Network: s.Network}
}
