package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// cleanScratch validates Spec.Scratch: each directory absolute after
// resolving symlinks (the layer goes over what is really there), not the
// root, and free of the characters overlayfs options cannot carry. A
// directory inside a writable root (writable, already cleaned) is left out:
// there the caller asked for writes that persist (a build cache kept
// between runs), which a discarding layer would silently undo.
func cleanScratch(dirs, writable []string) ([]string, error) {
	var out []string
	for _, d := range dirs {
		abs, err := cleanAbs(d)
		if err != nil {
			return nil, fmt.Errorf("scratch directory %q: %w", d, err)
		}
		if slices.ContainsFunc(writable, func(w string) bool { return within(abs, w) }) {
			continue
		}
		if abs == string(filepath.Separator) {
			return nil, fmt.Errorf("%w: scratch directory %q would layer the whole system", ErrBadSpec, d)
		}
		if strings.ContainsAny(abs, ":,\\\n") {
			return nil, fmt.Errorf("%w: scratch directory %q contains ':', ',' or '\\'", ErrBadSpec, abs)
		}
		out = append(out, abs)
	}
	return out, nil
}

// gocacheArg is the stage the go command starts inside a landlock or floor
// run as its GOCACHEPROG (goCacheScratch): a build cache that reads the
// host's Go build cache in place, never writing it, and keeps what the run
// stores in a private directory (internal/gocache, dispatched in
// init_linux.go). It is the scratch layer of the tiers that have no mount
// namespace for an overlay.
const gocacheArg = stagePrefix + "gocache"

// goCacheScratch is the scratch layer of the tiers that cannot mount an
// overlay (landlock, floor), for the one scratch directory that needs it
// most: the Go build cache the run's environment names (GOCACHE), which
// `go list -export` and the go/packages tools must be able to store into.
// The go command gets a private GOCACHE under private and, as its
// GOCACHEPROG, prog's gocache stage (internal/gocache), which answers from the
// private directory first and then from the host cache read in place, and
// stores only in the private one: hits are reused, nothing is copied, and
// the host cache is never written. prog must be in the run's read view
// (the caller adds it). Other scratch directories stay read-only, and the
// mechanisms say so. env is returned with GOCACHE and GOCACHEPROG set.
func goCacheScratch(scratch, env []string, private, prog string) ([]string, []Mechanism) {
	if len(scratch) == 0 {
		return env, nil
	}
	gocache := envValue(env, "GOCACHE")
	if gocache != "" {
		gocache, _ = cleanAbs(gocache)
	}
	var mechs []Mechanism
	for _, dir := range scratch {
		why := ""
		switch {
		case dir != gocache:
			why = "not the run's Go build cache (GOCACHE); no overlay without a mount namespace"
		case prog == "":
			why = "no cache program on this system"
		case envValue(env, "GOCACHEPROG") != "":
			why = "the run sets its own GOCACHEPROG"
		case strings.ContainsAny(prog+dir+private, `'"`):
			why = "a path holds a quote, which GOCACHEPROG cannot carry"
		}
		if why == "" {
			if err := os.MkdirAll(private, 0o700); err != nil {
				why = err.Error()
			}
		}
		if why != "" {
			mechs = append(mechs, Mechanism{"scratch-layer", StateUnavailable, dir + ": " + why + " (left read-only)"})
			continue
		}
		env = append(withoutVar(env, "GOCACHE"), "GOCACHE="+private,
			fmt.Sprintf("GOCACHEPROG='%s' %s '%s' '%s'", prog, gocacheArg, dir, private))
		mechs = append(mechs, Mechanism{"scratch-layer", StateApplied, dir + ": the go command reads the host cache in place and stores into a private cache discarded with the run (GOCACHEPROG " + prog + ")"})
	}
	return env, mechs
}

// envValue is the value of name in env (the last entry wins), or "".
func envValue(env []string, name string) string {
	v := ""
	for _, kv := range env {
		if rest, ok := strings.CutPrefix(kv, name+"="); ok {
			v = rest
		}
	}
	return v
}

// withoutVar is env without its entries for name.
func withoutVar(env []string, name string) []string {
	var out []string
	for _, kv := range env {
		if !strings.HasPrefix(kv, name+"=") {
			out = append(out, kv)
		}
	}
	return out
}
