package sandbox

import (
	"slices"

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
// view too (below). It runs once per process.
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

// A linux-tier stage started ahead of its run (a warm stage) binds the
// read view into a private root of its own before its config exists,
// from a hint: the view of the run that was current when the caller
// started it, passed in the stage's environment (stage_hint_linux.go),
// as the landlock runner's is (tier_landlock_hint_linux.go). A server's
// runs mostly share one view, so the next run finds its view bound. The hint is only a
// guess: the root bound from it is used only if the run's config asks
// for exactly the same view (paths, the links among them, the masked
// paths, and the network choice, which decides what happens below /sys),
// mounts nothing at or below a masked path, and only if every view path
// still names the very file that was bound there (same device and inode;
// a path missing then must still be missing). Anything else, and the
// run's view is bound from its config into the plain private root as for
// a cold start; the hinted root lies on the interim work tmpfs, which the
// root's final detach removes with everything else there. The hinted root
// also takes the fresh mounts (/proc, /dev, /tmp, and /sys without
// network; a run that does not take it moves them on) and the masks that
// fall in it, each of which the run's build checks (rootfs.MaskedAhead):
// a masked path that does not show the mask source then (the file was
// replaced) is masked again. The rest of the root (writable roots, protected
// directories, the stage, scratch layers) is built from the config either
// way.

// rootHintOf is cfg's view as a root hint.
func rootHintOf(cfg *initConfig) rootfs.Hint {
	return rootfs.Hint{Network: cfg.Network, View: cfg.ReadView, Masked: cfg.Masked, Links: cfg.ViewLinks}
}

// linuxRootHint is the hint's parts carrying cfg's view for PID 1
// (rootfs.Hint.Args: nil without a view).
func linuxRootHint(cfg *initConfig) []string { return rootHintOf(cfg).Args() }

// hintUsed: the run took the root bound ahead (useHintedView).
var hintUsed bool

// hinted is the view bound ahead from a hint (rootfs.Interim.Prebind,
// prepareInterim), claimed or dropped by the run (useHintedView).
var hinted *rootfs.Prebound

// useHintedView makes the view bound from the hint the run's private root
// (privateRoot) if it fits the run (see the top of this file). It returns
// the number of paths bound, and false when the run's view must be bound
// from its config into the plain private root.
func useHintedView(cfg *initConfig) (int, bool) {
	hv := hinted
	hinted = nil
	if hv == nil || !hv.Hint.Fits(rootHintOf(cfg), hostRoot, hv.IDs) || mountsUnderMask(cfg) {
		return 0, false
	}
	privateRoot, hintUsed = rootfs.HintedRoot, true
	return hv.Bound, true
}

// mountsUnderMask reports whether the run mounts something (a writable
// root, the stage, a scratch layer) at or below one of its masked paths
// (rootfs.MountsUnderMask).
func mountsUnderMask(cfg *initConfig) bool {
	return rootfs.MountsUnderMask(slices.Concat(cfg.Writable, cfg.Scratch, []string{cfg.StageLower}), cfg.Masked)
}
