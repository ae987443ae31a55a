package sandbox

// poolOS is what a pool keeps ahead for the Linux tiers' next run.
type poolOS struct {
	stages warmStages  // warm_linux.go
	cgroup spareCgroup // cgroup_spare_linux.go
	dir    spareDir    // private_linux.go
}

// drain ends what a closed pool holds: the warm stages are killed and
// reaped, the background work is waited for, then the spares it made are
// removed.
func (o *poolOS) drain(bg *pending) {
	o.stages.drop()
	bg.Wait()
	o.dir.drop()
	o.cgroup.drop()
}
