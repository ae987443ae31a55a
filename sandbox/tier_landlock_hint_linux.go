package sandbox

import (
	"errors"
	"path/filepath"
	"slices"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// A landlock runner started ahead of its run (a warm stage) builds the
// read view's rules before its config exists, from a hint: the view of
// the run that was current when the caller started it, passed on the
// runner's command line (as bubblewrap takes its paths). A server's runs
// mostly share one view, so the next run finds its rules built. The hint
// is only a guess: the rules built from it are used only if the run's
// config asks for exactly the same view (paths, their types, and the
// network choice, which decides the handled rights), and only if every
// view path still names the very file the rule was made from (same device
// and inode as the descriptor the rule holds; a path missing then must
// still be missing). Anything else, and the ruleset is built from the
// config as for a cold start. The writable roots (with the run's own
// temporary directory) are always added from the config.

// hintArg introduces the hint among the runner's arguments:
// hintArg, "0" or "1" (network), the view's types, then the view's paths.
const hintArg = "--view-hint"

// landlockHint is the runner's arguments carrying cfg's view as a hint.
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

// viewHint is a hint read back from the runner's arguments.
type viewHint struct {
	network bool
	types   string
	view    []string
}

// parseHint reads the hint from the arguments after the stage's name;
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
	fd, err := newTierRuleset(abi, h.network)
	if err != nil {
		return nil
	}
	b := &rulesetBuilder{fd: fd, handled: llHandledFS(abi)}
	pr := &prebuiltRuleset{fd: fd, hint: h, ids: make([]fileID, len(h.view))}
	err = b.addView(nil, "") // the devices
	for i := 0; err == nil && i < len(h.view); i++ {
		pr.ids[i], err = b.addIdentified(h.view[i])
	}
	b.closeHeld()
	if err != nil {
		unix.Close(fd)
		return nil
	}
	return pr
}

// addIdentified adds the read rule for path (the kind is its descriptor's)
// and returns which file that was.
func (b *rulesetBuilder) addIdentified(path string) (fileID, error) {
	pfd, err := b.open(path)
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
	want := llRead & b.handled
	if st.Mode&unix.S_IFMT != unix.S_IFDIR {
		want &= llFile
	}
	if want != 0 {
		if err := landlockAddPath(b.fd, pfd, want); err != nil {
			return fileID{}, err
		}
	}
	return fileID{dev: st.Dev, ino: st.Ino}, nil
}

// claimPrebuilt returns the prebuilt ruleset if the run asks for exactly
// its view, types and network choice, with the check of its paths
// (viewCheck) under way; else nil. Either way the runner holds no
// prebuilt ruleset after.
func claimPrebuilt(cfg *initConfig) (*prebuiltRuleset, *viewCheck) {
	pr := prebuilt
	prebuilt = nil
	if pr == nil {
		return nil, nil
	}
	h := pr.hint
	if cfg.Network != h.network || cfg.ReadViewTypes != h.types || !slices.Equal(cfg.ReadView, h.view) {
		unix.Close(pr.fd)
		return nil, nil
	}
	return pr, pr.startCheck()
}

// dropPrebuilt closes a prebuilt ruleset the run does not use.
func dropPrebuilt() {
	if prebuilt != nil {
		unix.Close(prebuilt.fd)
		prebuilt = nil
	}
}

// viewCheck checks that each hinted path still names the file its rule
// holds: one stat per path (about 1.5 us each here, mostly the kernel's
// lookup and getattr: 0.25-0.3 ms for a view of 160 paths). A helper
// goroutine starts on it at once (startCheck) while the runner thread
// does its other work; then the runner thread takes the chunks left
// (wait) and checks again itself any chunk the helper has taken but not
// finished, so it never waits for the helper: where the second CPU is
// busy it does every chunk itself. The answer is true only if every
// chunk was found unchanged by a check made after the run's config came.
type viewCheck struct {
	pr   *prebuiltRuleset
	n    int          // chunks of viewChunk paths
	next atomic.Int64 // the next chunk to take
	bad  atomic.Bool  // a path names another file now
	// done[i] is set when chunk i was found unchanged.
	done []atomic.Bool
}

// viewChunk is how many paths a viewCheck worker takes at a time.
const viewChunk = 8

// startCheck starts checking pr's paths.
func (pr *prebuiltRuleset) startCheck() *viewCheck {
	n := (len(pr.hint.view) + viewChunk - 1) / viewChunk
	c := &viewCheck{pr: pr, n: n, done: make([]atomic.Bool, n)}
	if n > 1 {
		go c.work() // ends when no chunk is left to take
	}
	return c
}

// work takes chunks until none is left or one has failed.
func (c *viewCheck) work() {
	for !c.bad.Load() {
		i := int(c.next.Add(1) - 1)
		if i >= c.n {
			return
		}
		c.check(i)
	}
}

// check checks chunk i.
func (c *viewCheck) check(i int) {
	if c.pr.same(i*viewChunk, min((i+1)*viewChunk, len(c.pr.hint.view))) {
		c.done[i].Store(true)
	} else {
		c.bad.Store(true)
	}
}

// wait finishes the check on the calling thread and reports whether
// every path still names the file its rule holds.
func (c *viewCheck) wait() bool {
	c.work()
	for i := range c.done {
		if c.bad.Load() {
			return false
		}
		if !c.done[i].Load() {
			c.check(i) // taken by the helper, not finished yet
		}
	}
	return !c.bad.Load()
}

// same reports whether the hinted paths lo..hi-1 still name the files
// their rules hold (a path missing then must still be missing).
func (pr *prebuiltRuleset) same(lo, hi int) bool {
	for i := lo; i < hi; i++ {
		var st unix.Stat_t
		err := unix.Stat(pr.hint.view[i], &st)
		switch {
		case pr.ids[i].missing:
			if !errors.Is(err, unix.ENOENT) {
				return false
			}
		case err != nil || st.Dev != pr.ids[i].dev || st.Ino != pr.ids[i].ino:
			return false
		}
	}
	return true
}
