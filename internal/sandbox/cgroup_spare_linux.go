package sandbox

import "sync"

// A run's groups are made before its stage gets its config: a mkdir per
// group and a write per limit in cgroupfs, about 0.25 ms on the run's
// path. A long-lived caller (KeepWarm) has the next run's groups made
// ahead, when a run's own are removed in the background, with that run's
// limits: the next run mostly asks for the same, and takes them as they
// are. A spare group is new, like one made in line: no process was ever
// in it. It carries this process's pid in its name, so no other caller
// sweeps it; KeepWarm(false) removes it.

// spareCgroup is the groups made ahead for the next run, and for what.
var spareCgroup struct {
	sync.Mutex
	cg     *cgroup
	ms     []Mechanism
	limits Limits
	lay    *cgroupLayout
}

// claimSpareCgroup takes the spare groups when they were made with the
// same limits in the current layout; nil otherwise (a spare that does not
// fit is removed).
func claimSpareCgroup(l Limits) (*cgroup, []Mechanism) {
	spareCgroup.Lock()
	cg, ms, limits, lay := spareCgroup.cg, spareCgroup.ms, spareCgroup.limits, spareCgroup.lay
	spareCgroup.cg = nil
	spareCgroup.Unlock()
	if cg == nil {
		return nil, nil
	}
	if limits.Memory != l.Memory || limits.Procs != l.Procs || lay != layout() {
		cg.remove()
		return nil, nil
	}
	return cg, ms
}

// makeSpareCgroup makes the next run's groups with limits l, unless warm
// stages are off or a spare is there.
func makeSpareCgroup(l Limits) {
	if l.Memory <= 0 && l.Procs <= 0 {
		return
	}
	spareCgroup.Lock()
	busy := spareCgroup.cg != nil
	spareCgroup.Unlock()
	if busy || !warmOn() {
		return
	}
	lay := layout()
	cg, ms := makeCgroup(l, lay)
	if cg == nil {
		return
	}
	spareCgroup.Lock()
	keep := spareCgroup.cg == nil && warmOn()
	if keep {
		spareCgroup.cg, spareCgroup.ms, spareCgroup.limits, spareCgroup.lay = cg, ms, l, lay
	}
	spareCgroup.Unlock()
	if !keep {
		cg.remove()
	}
}

// dropSpareCgroup removes the spare groups (KeepWarm(false)).
func dropSpareCgroup() {
	spareCgroup.Lock()
	cg := spareCgroup.cg
	spareCgroup.cg = nil
	spareCgroup.Unlock()
	cg.remove()
}
