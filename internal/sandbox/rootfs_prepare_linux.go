package sandbox

import (
	"github.com/ioh-lsp/ioh-lsp/internal/sandbox/internal/rootfs"
)

// The part of the linux tier's private root that no run's config decides
// (the interim root, the mask source, the fresh /proc, /dev, /tmp and
// sysfs: rootfs.Interim) is built by prepareRoot. It depends only on the
// namespaces the stage was started in, so a stage started ahead of its
// run (warm_linux.go) can build it while it waits for its config;
// setupRoot then moves the pieces into the private root, one mount call
// each. A stage that did not prepare has setupRoot do it first, the same
// way.

// The interim root's paths the rest of the package uses (rootfs.WorkDir
// has the layout).
const (
	workDir  = rootfs.WorkDir
	hostRoot = rootfs.HostRoot
	preDir   = rootfs.PreDir
)

// privateRoot is where the run's private root is built in the interim
// root: rootfs.PlainRoot, or the one bound ahead from a hint
// (useHintedView).
var privateRoot = rootfs.PlainRoot

// prepared is what prepareRoot did: err fails the run's setup; the
// Interim's sysfs and boot id errors are reported by hideHostInfo only if
// the run uses what they concern.
var prepared struct {
	done bool
	err  error
	rootfs.Interim
}

// prepareRoot builds the prepared pieces and pivots into the interim
// root, then changes this process's root to hostRoot (rootfs.EnterHost):
// until setupRoot changes it back (prepared.Enter), host paths (a
// config's cgroup files) resolve as before. A stage started with a hint
// of its run's view (hint: stageHint, stage_hint_linux.go) binds that
// view too (rootfs_hint_linux.go). It runs once per process.
func prepareRoot(hint []string) {
	if prepared.done {
		return
	}
	prepared.done = true
	prepared.err = prepareInterim(hint)
}

func prepareInterim(hint []string) error {
	if err := prepared.Build(rootfs.Options{TmpOpts: tmpOpts, Home: privateHome, SysMasked: sysfsMasked}); err != nil {
		return err
	}
	// The Landlock rules for the prepared /tmp, /dev/shm and devices are
	// made from them here, before a hinted root may take them.
	preparePID1Rules(preDir) // pid1_landlock_linux.go
	hinted = prepared.Prebind(hint)
	return rootfs.EnterHost()
}
