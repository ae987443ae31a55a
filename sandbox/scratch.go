package sandbox

import (
	"fmt"
	"path/filepath"
	"strings"
)

// cleanScratch validates Spec.Scratch: each directory absolute after
// resolving symlinks (the layer goes over what is really there), not the
// root, and free of the characters overlayfs options cannot carry.
func cleanScratch(dirs []string) ([]string, error) {
	var out []string
	for _, d := range dirs {
		abs, err := cleanAbs(d)
		if err != nil {
			return nil, fmt.Errorf("scratch directory %q: %w", d, err)
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
