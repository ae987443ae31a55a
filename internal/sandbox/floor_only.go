//go:build unix && !linux && !darwin

package sandbox

// The other Unix systems (the BSDs, illumos, Solaris, AIX) have no tier
// of their own: the floor alone, whose stage takes the rlimits and
// execs the command in a new process group (floor_unix.go). Doctor and
// Runner report that tier and what it does not contain, as they do
// where a stronger tier fails.

func candidates() []backend { return []backend{floorBackend{}} }

func stageMain(name string) int {
	if name == floorArg {
		return floorMain()
	}
	return 2
}
