package sandbox

import (
	"github.com/ioh-lsp/ioh-lsp/internal/sandbox/internal/ruleset"

	"errors"
	"path/filepath"
	"slices"

	"golang.org/x/sys/unix"
)

// A landlock runner started ahead of its run (a warm stage) builds the
// read view's rules before its config exists, from a hint: the view of
// the run that was current when the caller started it, passed in the
// runner's environment (stage_hint_linux.go). A server's runs
// mostly share one view, so the next run finds its rules built. The hint
// is only a guess: the rules built from it are used only if the run's
// config asks for exactly the same view (paths, their types, and the
// network choice, which decides the handled rights), and only if every
// view path still names the very file the rule was made from (same device
// and inode as the descriptor the rule holds; a path missing then must
// still be missing). Anything else, and the ruleset is built from the
// config as for a cold start. The writable roots (with the run's own
// temporary directory) are always added from the config.

// hintArg introduces the hint's parts (stage_hint_linux.go):
// hintArg, "0" or "1" (network), the view's types, then the view's paths.
const hintArg = "--view-hint"

// landlockHint is the hint's parts carrying cfg's view for the runner.
func landlockHint(cfg *initConfig) []string {
	if len(cfg.ReadView) == 0 || len(cfg.ReadViewTypes) != len(cfg.ReadView) {
		return nil
	}
	net := "0"
	if cfg.Network {
		net = "1"
	}
	return append([]string{hintArg, net, cfg.ReadViewTypes}, cfg.ReadView...)
}

// viewHint is a hint read back from the runner's environment.
type viewHint struct {
	network bool
	types   string
	view    []string
}

// parseHint reads the hint from its parts (stageHint);
// ok is false when there is none or it is malformed.
func parseHint(args []string) (viewHint, bool) {
	if len(args) < 3 || args[0] != hintArg || (args[1] != "0" && args[1] != "1") {
		return viewHint{}, false
	}
	h := viewHint{network: args[1] == "1", types: args[2], view: args[3:]}
	if len(h.types) != len(h.view) {
		return viewHint{}, false
	}
	for _, p := range h.view {
		if !filepath.IsAbs(p) || filepath.Clean(p) != p {
			return viewHint{}, false
		}
	}
	return h, true
}

// fileID is what a view path named when its rule was made.
type fileID struct {
	dev, ino uint64
	missing  bool
}

// prebuiltRuleset is a ruleset holding the devices and a hinted view.
type prebuiltRuleset struct {
	fd   int
	hint viewHint
	ids  []fileID
	// The plan of the check (tier_landlock_viewcheck_linux.go): the
	// directories checked by a listing, and the watch on the mount
	// table (-1: none).
	listed []*listedDir
	mounts int
	buf    []byte // for the listings
}

// prebuilt is the runner's ruleset built ahead (runnerThread), claimed or
// dropped by the run (claimPrebuilt). Only the runner thread touches it.
var prebuilt *prebuiltRuleset

// prebuildRuleset builds the devices' and the hinted view's rules, each
// entry's kind read from its own descriptor; nil when anything fails.
func prebuildRuleset(h viewHint) *prebuiltRuleset {
	abi := landlockABI()
	if abi < 1 {
		return nil
	}
	fd, err := ruleset.New(abi, h.network)
	if err != nil {
		return nil
	}
	b := &ruleset.Builder{FD: fd, Handled: ruleset.HandledFS(abi)}
	pr := &prebuiltRuleset{fd: fd, hint: h, ids: make([]fileID, len(h.view))}
	err = addView(b, nil, "") // the devices
	for i := 0; err == nil && i < len(h.view); i++ {
		pr.ids[i], err = addIdentified(b, h.view[i])
	}
	b.Close()
	if err != nil {
		unix.Close(fd)
		return nil
	}
	pr.planCheck()
	return pr
}

// addIdentified adds the read rule for path (the kind is its descriptor's)
// and returns which file that was.
func addIdentified(b *ruleset.Builder, path string) (fileID, error) {
	pfd, err := b.Open(path)
	if errors.Is(err, unix.ENOENT) {
		return fileID{missing: true}, nil
	}
	if err != nil {
		return fileID{}, err
	}
	var st unix.Stat_t
	if err := unix.Fstat(pfd, &st); err != nil {
		return fileID{}, err
	}
	want := ruleset.Read & b.Handled
	if st.Mode&unix.S_IFMT != unix.S_IFDIR {
		want &= ruleset.File
	}
	if want != 0 {
		if err := ruleset.AddPath(b.FD, pfd, want); err != nil {
			return fileID{}, err
		}
	}
	return fileID{dev: st.Dev, ino: st.Ino}, nil
}

// claimPrebuilt returns the prebuilt ruleset if the run asks for exactly
// its view, types and network choice (whether its paths still name the
// same files is for the caller to check: unchanged); else nil. Either way
// the runner holds no prebuilt ruleset after.
func claimPrebuilt(cfg *initConfig) *prebuiltRuleset {
	pr := prebuilt
	prebuilt = nil
	if pr == nil {
		return nil
	}
	h := pr.hint
	if cfg.Network != h.network || cfg.ReadViewTypes != h.types || !slices.Equal(cfg.ReadView, h.view) {
		pr.close()
		return nil
	}
	return pr
}

// dropPrebuilt closes a prebuilt ruleset the run does not use.
func dropPrebuilt() {
	if prebuilt != nil {
		prebuilt.close()
		prebuilt = nil
	}
}
