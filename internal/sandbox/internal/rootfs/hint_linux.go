package rootfs

import (
	"maps"
	"path/filepath"
	"slices"
	"strconv"

	"golang.org/x/sys/unix"
)

// HintArg introduces a root hint's parts: HintArg, "0" or "1" (network),
// the number of view paths, the paths, the number of masked paths, the
// masked paths, then the links as pairs of parts (path, target).
const HintArg = "--root-hint"

// A Hint is the view a warm stage binds ahead of its run: the view's
// paths, the masked paths, the links among the view's paths, and the
// network choice (which decides what happens below /sys).
type Hint struct {
	Network bool
	View    []string
	Masked  []string
	Links   map[string]string
}

// Args is the hint's parts, nil for a hint without a view.
func (h Hint) Args() []string {
	if len(h.View) == 0 {
		return nil
	}
	net := "0"
	if h.Network {
		net = "1"
	}
	args := append([]string{HintArg, net, strconv.Itoa(len(h.View))}, h.View...)
	args = append(append(args, strconv.Itoa(len(h.Masked))), h.Masked...)
	for _, l := range slices.Sorted(maps.Keys(h.Links)) {
		args = append(args, l, h.Links[l])
	}
	return args
}

// ParseHint reads a hint from its parts (Args); ok is false when there
// is none or it is malformed: a count that does not match, a path that
// is not absolute and clean.
func ParseHint(args []string) (h Hint, ok bool) {
	if len(args) < 3 || args[0] != HintArg || (args[1] != "0" && args[1] != "1") {
		return Hint{}, false
	}
	n, err := strconv.Atoi(args[2])
	rest := args[3:]
	if err != nil || n <= 0 || n >= len(rest) {
		return Hint{}, false
	}
	h = Hint{Network: args[1] == "1", View: rest[:n], Links: map[string]string{}}
	m, err := strconv.Atoi(rest[n])
	rest = rest[n+1:]
	if err != nil || m < 0 || m > len(rest) || (len(rest)-m)%2 != 0 {
		return Hint{}, false
	}
	h.Masked, rest = rest[:m], rest[m:]
	for i := 0; i < len(rest); i += 2 {
		h.Links[rest[i]] = rest[i+1]
	}
	for _, p := range slices.Concat(h.View, h.Masked, slices.Collect(maps.Keys(h.Links))) {
		if !filepath.IsAbs(p) || filepath.Clean(p) != p {
			return Hint{}, false
		}
	}
	return h, true
}

// A Prebound is a view bound ahead from a hint (Prebind): the hint, what
// each of its paths named when it was bound, and how many were bound.
type Prebound struct {
	Hint  Hint
	IDs   []PathID
	Bound int
}

// Prebind binds the view of the hint args (Hint.Args) into HintedRoot, a
// tmpfs with the private root's mount points, while this process's root
// is the interim root (after Build, before EnterHost), and moves the
// fresh mounts in (/proc, /dev, /tmp, and /sys for a hint without
// network, whose view leaves /sys to the fresh sysfs; a run that does not
// take this root moves them on to its own, Move), then masks the hint's
// masked paths that fall in it; each mask is to be checked by the run's
// build (MaskedAhead), which masks again what does not show the mask
// source then. It returns nil when the hint is absent or malformed or
// anything fails (what was mounted stays on the work tmpfs, detached at
// the end). Whether the root fits the run is the caller's to decide
// (Hint.Fits).
func (in *Interim) Prebind(args []string) *Prebound {
	h, ok := ParseHint(args)
	if !ok {
		return nil
	}
	if err := unix.Mkdir(HintedRoot, 0o755); err != nil {
		return nil
	}
	if err := unix.Mount("tmpfs", HintedRoot, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "mode=0755,size=1m"); err != nil {
		return nil
	}
	for _, d := range []string{"/proc", "/dev", "/tmp"} {
		if unix.Mkdir(HintedRoot+d, 0o755) != nil {
			return nil
		}
	}
	ids := make([]PathID, len(h.View))
	bound, err := BindView(HostRoot, HintedRoot, h.View, h.Links, h.Network, ids)
	if err != nil {
		return nil
	}
	pieces := []string{"/proc", "/dev", "/tmp"}
	if !h.Network && in.SysErr == nil {
		var st unix.Stat_t
		if unix.Stat(HintedRoot+"/sys", &st) == nil {
			pieces = append(pieces, "/sys")
		}
	}
	for _, d := range pieces {
		if in.Move(d, HintedRoot) != nil {
			return nil
		}
	}
	for _, m := range h.Masked {
		if Mask(HideSrc, HintedRoot+m) != nil {
			return nil
		}
	}
	return &Prebound{Hint: h, IDs: ids, Bound: bound}
}
