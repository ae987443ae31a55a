package rootfs

import (
	"maps"
	"path/filepath"
	"slices"
	"strconv"
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
