package sandbox

import (
	"os"

	"github.com/ioh-lsp/ioh-lsp/internal/sandbox/internal/cgroups"
)

// cgroup is one run's control groups (internal/cgroups: made, joined,
// read and removed there); a nil one means none apply.
type cgroup = cgroups.Group

// cgroupLayout is where this process's runs put their groups.
type cgroupLayout = cgroups.Layout

// cgroupPrefix starts the name of every run's group.
const cgroupPrefix = cgroups.Prefix

// newCgroup creates groups for the limits that are set and returns the
// mechanisms it applied or why not, taking p's spare when it fits. A nil
// cgroup means none apply.
func newCgroup(p *Pool, l Limits) (*cgroup, []Mechanism) {
	if l.Memory <= 0 && l.Procs <= 0 {
		return nil, nil
	}
	if cg, ms := p.claimSpareCgroup(l); cg != nil { // cgroup_spare_linux.go
		return cg, ms
	}
	return makeCgroup(l, layout())
}

// makeCgroup is newCgroup without a spare: it creates the groups in lay.
func makeCgroup(l Limits, lay *cgroupLayout) (*cgroup, []Mechanism) {
	cg, cms := cgroups.Make(l.Memory, l.Procs, lay)
	ms := make([]Mechanism, len(cms))
	for i, m := range cms {
		ms[i] = Mechanism(m)
	}
	return cg, ms
}

// layout is this process's cgroup layout, detected again only when its
// own groups changed since the last run.
func layout() *cgroupLayout { return cgroups.Current() }

// sweepBases removes the stale groups of dead callers; after a run, off
// its path.
func sweepBases() { cgroups.SweepBases() }

// cgroupCapHit names the cap the run's groups say it hit, or "".
func cgroupCapHit(cg *cgroup) string {
	switch mem, procs := cg.Hit(); {
	case mem:
		return CapMemory
	case procs:
		return CapProcesses
	}
	return ""
}

// v1Own and v2Base are where this process's v1 and v2 groups are (the
// cgroup tests look there).
func v1Own(controller string) string { return cgroups.V1Own(controller) }
func v2Base() (string, string)       { return cgroups.V2Base() }

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if x == y {
			return true
		}
	}
	return false
}

func closeAll(fs []*os.File) {
	for _, f := range fs {
		f.Close()
	}
}
