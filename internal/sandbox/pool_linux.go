package sandbox

// poolOS is what a pool keeps ahead for the Linux tiers' next run.
type poolOS struct {
	stages warmStages  // warm_linux.go
	cgroup spareCgroup // cgroup_spare_linux.go
	dir    spareDir    // private_linux.go
	views  viewCaches
}

// viewCaches are a pool's caches of the resolved and carved forms of the
// runs' views. Each entry is keyed by everything it was computed from
// (the View, the run's working directory, writable roots, stage and
// their real paths, the protected paths present) and lives at most
// viewCacheTTL; each is rechecked against the file tree where that can
// change under it (symlink targets, view paths' kinds).
type viewCaches struct {
	roots    staticRootsCache  // linux tier: readview_cache.go
	landlock landlockViewCache // landlock tier, static part: readview.go
	runs     runViewCache      // landlock tier, whole view: landlock_view_cache_linux.go
	kind     viewKindCache     // landlock tier, view paths' kinds: tier_landlock_rules_linux.go
}

// caches returns p's view caches, nil for the cold path (nil or closed).
func (p *Pool) caches() *viewCaches {
	if !p.active() {
		return nil
	}
	return &p.os.views
}

func (c *viewCaches) staticRoots() *staticRootsCache {
	if c == nil {
		return nil
	}
	return &c.roots
}

func (c *viewCaches) landlockStatic() *landlockViewCache {
	if c == nil {
		return nil
	}
	return &c.landlock
}

func (c *viewCaches) kinds() *viewKindCache {
	if c == nil {
		return nil
	}
	return &c.kind
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
