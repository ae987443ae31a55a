package contain

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
)

// MaxWithheldWalk bounds the entries Withheld looks at in one workspace.
const MaxWithheldWalk = 200_000

// Withheld lists the files of the workspace at root (slash paths relative
// to it, sorted) that allow refuses: the files the run's read policy
// denies or asks about and no answer allows in this run, which a
// contained command must not read for the model either (Request.Withheld).
// Every file is judged, those git ignores too (a .env usually is); the
// .git directory is not walked. A walk past MaxWithheldWalk entries stops
// with an error that says so, returned with what it found: the files past
// the bound are not withheld.
func Withheld(root string, allow func(rel string) bool) ([]string, error) {
	var out []string
	seen := 0
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == root {
				return err
			}
			return nil // unreadable below the root: the command cannot read it either
		}
		if p == root {
			return nil
		}
		if seen++; seen > MaxWithheldWalk {
			return errWalkBound
		}
		if d.IsDir() {
			if d.Name() == ".git" {
				return filepath.SkipDir
			}
			return nil
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return nil
		}
		if rel = filepath.ToSlash(rel); !allow(rel) {
			out = append(out, rel)
		}
		return nil
	})
	slices.Sort(out)
	if errors.Is(err, errWalkBound) {
		return out, fmt.Errorf("the read policy was applied to the first %d entries of %s only: files past them are readable inside", MaxWithheldWalk, root)
	}
	return out, err
}

var errWalkBound = errors.New("walk bound")
