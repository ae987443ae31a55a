package sandbox

import (
	"fmt"
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
