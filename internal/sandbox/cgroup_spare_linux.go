package sandbox

import "sync"

// A run's groups are made before its stage gets its config: a mkdir per
// group and a write per limit in cgroupfs, about 0.25 ms on the run's
// path. A long-lived caller's Pool has the next run's groups made ahead,
// when a run's own are removed in the background, with that run's limits:
// the next run mostly asks for the same, and takes them as they are. A
// spare group is new, like one made in line: no process was ever in it.
// It carries this process's pid in its name, so no other caller sweeps
// it; Pool.Close removes it.

// spareCgroup is the groups a pool made ahead for the next run, and for
// what.
type spareCgroup struct {
	sync.Mutex
	cg     *cgroup
	ms     []Mechanism
	limits Limits
	lay    *cgroupLayout
}

// claimSpareCgroup takes p's spare groups when they were made with the
// same limits in the current layout; nil otherwise (a spare that does not
// fit is removed).
func (p *Pool) claimSpareCgroup(l Limits) (*cgroup, []Mechanism) {
	if p == nil {
		return nil, nil
	}
	sc := &p.os.cgroup
	sc.Lock()
	cg, ms, limits, lay := sc.cg, sc.ms, sc.limits, sc.lay
	sc.cg = nil
	sc.Unlock()
	if cg == nil {
		return nil, nil
	}
	if limits.Memory != l.Memory || limits.Procs != l.Procs || lay != layout() {
		cg.Remove()
		return nil, nil
	}
	return cg, ms
}

// makeSpareCgroup makes p's next run's groups with limits l, unless p is
// nil or closed or a spare is there.
func (p *Pool) makeSpareCgroup(l Limits) {
	if (l.Memory <= 0 && l.Procs <= 0) || !p.active() {
		return
	}
	sc := &p.os.cgroup
	sc.Lock()
	busy := sc.cg != nil
	sc.Unlock()
	if busy {
		return
	}
	lay := layout()
	cg, ms := makeCgroup(l, lay)
	if cg == nil {
		return
	}
	sc.Lock()
	keep := sc.cg == nil && p.active()
	if keep {
		sc.cg, sc.ms, sc.limits, sc.lay = cg, ms, l, lay
	}
	sc.Unlock()
	if !keep {
		cg.Remove()
	}
}

// drop removes the spare groups (Pool.Close).
func (sc *spareCgroup) drop() {
	sc.Lock()
	cg := sc.cg
	sc.cg = nil
	sc.Unlock()
	cg.Remove()
}
