package sandbox

import (
	"errors"
	"maps"
	"slices"

	"golang.org/x/sys/unix"

	"github.com/ioh-lsp/ioh-lsp/internal/sandbox/internal/rootfs"
)

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
// fall in it, each of which the run's build checks (maskedAhead): a masked
// path that does not show the mask source then (the file was replaced) is
// masked again. The rest of the root (writable roots, protected
// directories, the stage, scratch layers) is built from the config either
// way.

// hintedRoot is where the hinted view is bound, on the interim work
// tmpfs, next to the plain private root.
const hintedRoot = workDir + "/view"

// rootHintOf is cfg's view as a root hint.
func rootHintOf(cfg *initConfig) rootfs.Hint {
	return rootfs.Hint{Network: cfg.Network, View: cfg.ReadView, Masked: cfg.Masked, Links: cfg.ViewLinks}
}

// linuxRootHint is the hint's parts carrying cfg's view for PID 1
// (rootfs.Hint.Args: nil without a view).
func linuxRootHint(cfg *initConfig) []string { return rootHintOf(cfg).Args() }

// viewID is what a view path named when it was bound from a hint.
type viewID struct {
	state    uint8 // viewSkipped, viewBound or viewMissing
	dev, ino uint64
}

const (
	viewSkipped = iota // not bound: a fresh mount covers it
	viewBound
	viewMissing
)

// hintUsed: the run took the root bound ahead (useHintedView).
var hintUsed bool

// hinted is the view bound ahead from a hint (prebindView), claimed or
// dropped by the run (useHintedView).
var hinted *struct {
	hint  rootfs.Hint
	ids   []viewID
	bound int
}

// prebindView binds the hinted view into hintedRoot, a tmpfs with the
// private root's mount points, while this process's root is the interim
// root (prepareInterim); nothing when the hint is absent or anything
// fails (what was mounted stays on the work tmpfs, detached at the end).
func prebindView(args []string) {
	h, ok := rootfs.ParseHint(args)
	if !ok {
		return
	}
	if err := unix.Mkdir(hintedRoot, 0o755); err != nil {
		return
	}
	if err := unix.Mount("tmpfs", hintedRoot, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "mode=0755,size=1m"); err != nil {
		return
	}
	for _, d := range []string{"/proc", "/dev", "/tmp"} {
		if unix.Mkdir(hintedRoot+d, 0o755) != nil {
			return
		}
	}
	ids := make([]viewID, len(h.View))
	bound, err := bindView(hintedRoot, h.View, h.Links, h.Network, ids)
	if err != nil {
		return
	}
	// The fresh mounts go in too (a run that does not take this root
	// moves them on to its own, movePiece), the fresh sysfs only for a
	// run without network, whose view leaves /sys to it.
	pieces := []string{"/proc", "/dev", "/tmp"}
	if !h.Network && prepared.sysErr == nil {
		var st unix.Stat_t
		if unix.Stat(hintedRoot+"/sys", &st) == nil {
			pieces = append(pieces, "/sys")
		}
	}
	for _, d := range pieces {
		if unix.Mount(preDir+d, hintedRoot+d, "", unix.MS_MOVE, "") != nil {
			return
		}
		prepared.at[d] = hintedRoot
	}
	// The masks that fall in this root; the run's build checks each
	// (maskedAhead) and masks again what is not masked then.
	for _, m := range h.Masked {
		if rootfs.Mask(hideSrc, hintedRoot+m) != nil {
			return
		}
	}
	hinted = &struct {
		hint  rootfs.Hint
		ids   []viewID
		bound int
	}{h, ids, bound}
}

// useHintedView makes the view bound from the hint the run's private root
// (privateRoot) if it fits the run (see the top of this file). It returns
// the number of paths bound, and false when the run's view must be bound
// from its config into the plain private root.
func useHintedView(cfg *initConfig) (int, bool) {
	hv := hinted
	hinted = nil
	if hv == nil || !hintFits(hostRoot, hv.hint, hv.ids, cfg) || mountsUnderMask(cfg) {
		return 0, false
	}
	privateRoot, hintUsed = hintedRoot, true
	return hv.bound, true
}

// hintFits reports whether the run asks for exactly the hinted view and
// each of its paths still names what was bound there (host paths, read
// below root: hostRoot).
func hintFits(root string, h rootfs.Hint, ids []viewID, cfg *initConfig) bool {
	if cfg.Network != h.Network || !slices.Equal(cfg.ReadView, h.View) || !maps.Equal(cfg.ViewLinks, h.Links) || !slices.Equal(cfg.Masked, h.Masked) {
		return false
	}
	for i, p := range h.View {
		if ids[i].state == viewSkipped {
			continue
		}
		var st unix.Stat_t
		err := unix.Stat(root+p, &st)
		switch ids[i].state {
		case viewMissing:
			if !errors.Is(err, unix.ENOENT) {
				return false
			}
		default:
			if err != nil || st.Dev != ids[i].dev || st.Ino != ids[i].ino {
				return false
			}
		}
	}
	return true
}

// mountsUnderMask reports whether the run mounts something (a writable
// root, the stage, a scratch layer) at or below one of its masked paths:
// its build mounts those before it masks, so the mask hides them, and a
// mask bound ahead would stand in their way.
func mountsUnderMask(cfg *initConfig) bool {
	for _, r := range slices.Concat(cfg.Writable, cfg.Scratch, []string{cfg.StageLower}) {
		for _, m := range cfg.Masked {
			if r != "" && within(r, m) {
				return true
			}
		}
	}
	return false
}

// maskedAhead reports whether the path p of the private root shows the
// mask source now: masked ahead from the hint, with nothing the run's
// build mounted since covering it, and still the file the path names.
func maskedAhead(p string) bool {
	var st unix.Stat_t
	if unix.Lstat(p, &st) != nil {
		return false
	}
	for _, id := range prepared.hideIDs {
		if id.state == viewBound && st.Dev == id.dev && st.Ino == id.ino {
			return true
		}
	}
	return false
}
