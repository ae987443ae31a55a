package sandbox

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// Change is one staged file change, relative to the staged directory.
type Change struct {
	Path    string      // slash-separated, relative
	Delete  bool        // remove the file (or directory) from the view
	Content []byte      // new content when not Delete
	Mode    fs.FileMode // permission bits; 0 means 0644
}

// Stage is a verification view: a directory (the lower layer, never
// written) with a set of changes on top. On Linux the view is an overlay
// mounted inside the sandbox, so building a Stage costs O(changes); other
// backends copy the lower directory into a private place per run.
type Stage struct {
	lower   string
	upper   string // holds the changed files and, on Linux, whiteouts
	changes []Change
}

// NewStage prepares a view of lower with changes on top. Close removes the
// change directory; the lower directory is never touched.
func NewStage(lower string, changes []Change) (*Stage, error) {
	abs, err := cleanAbs(lower)
	if err != nil {
		return nil, fmt.Errorf("stage %s: %w", lower, err)
	}
	if fi, err := os.Stat(abs); err != nil {
		return nil, fmt.Errorf("stage %s: %w", lower, err)
	} else if !fi.IsDir() {
		return nil, fmt.Errorf("%w: stage %s is not a directory", ErrBadSpec, lower)
	}
	if strings.ContainsAny(abs, ":,\\\n") {
		// overlayfs option syntax cannot carry these characters safely.
		return nil, fmt.Errorf("%w: stage path %q contains ':', ',' or '\\'", ErrBadSpec, abs)
	}
	upper, err := os.MkdirTemp("", "ioh-stage-")
	if err != nil {
		return nil, fmt.Errorf("stage %s: %w", lower, err)
	}
	s := &Stage{lower: abs, upper: upper}
	for _, c := range changes {
		if err := s.add(c); err != nil {
			_ = os.RemoveAll(upper)
			return nil, err
		}
	}
	return s, nil
}

// Lower is the staged directory: the path where the view appears.
func (s *Stage) Lower() string { return s.lower }

// Changes returns the staged changes.
func (s *Stage) Changes() []Change { return s.changes }

// Close removes the staged change directory.
func (s *Stage) Close() error {
	if s == nil || s.upper == "" {
		return nil
	}
	err := os.RemoveAll(s.upper)
	s.upper = ""
	return err
}

// cleanRel validates a change path and returns it cleaned.
func cleanRel(p string) (string, error) {
	if p == "" || path.IsAbs(p) || strings.Contains(p, "\\") || strings.ContainsRune(p, 0) {
		return "", fmt.Errorf("%w: path %q", ErrBadChange, p)
	}
	c := path.Clean(p)
	if c == "." || c == ".." || strings.HasPrefix(c, "../") {
		return "", fmt.Errorf("%w: path %q leaves the staged directory", ErrBadChange, p)
	}
	return c, nil
}

func (s *Stage) add(c Change) error {
	rel, err := cleanRel(c.Path)
	if err != nil {
		return err
	}
	c.Path = rel
	dst := filepath.Join(s.upper, filepath.FromSlash(rel))
	if err := s.mkParents(rel); err != nil {
		return err
	}
	if err := os.RemoveAll(dst); err != nil {
		return fmt.Errorf("stage %s: %w", rel, err)
	}
	if c.Delete {
		if err := whiteout(dst); err != nil {
			return fmt.Errorf("stage delete %s: %w", rel, err)
		}
	} else {
		mode := c.Mode.Perm()
		if mode == 0 {
			mode = 0o644
		}
		if err := os.WriteFile(dst, c.Content, mode); err != nil {
			return fmt.Errorf("stage write %s: %w", rel, err)
		}
		if err := os.Chmod(dst, mode); err != nil { // umask-proof
			return fmt.Errorf("stage write %s: %w", rel, err)
		}
	}
	s.changes = append(s.changes, c)
	return nil
}

// mkParents creates the parent directories of rel in the upper layer,
// copying the lower directories' modes. A parent that an earlier change
// deleted is refused: the view would be ambiguous.
func (s *Stage) mkParents(rel string) error {
	dir := path.Dir(rel)
	if dir == "." {
		return nil
	}
	parts := strings.Split(dir, "/")
	for i := range parts {
		sub := filepath.FromSlash(strings.Join(parts[:i+1], "/"))
		up := filepath.Join(s.upper, sub)
		fi, err := os.Lstat(up)
		if err == nil {
			if !fi.IsDir() {
				return fmt.Errorf("%w: %s: parent %s is staged as a file or deleted", ErrBadChange, rel, sub)
			}
			continue
		}
		mode := fs.FileMode(0o755)
		if lfi, err := os.Lstat(filepath.Join(s.lower, sub)); err == nil {
			if !lfi.IsDir() {
				return fmt.Errorf("%w: %s: parent %s is not a directory", ErrBadChange, rel, sub)
			}
			mode = lfi.Mode().Perm()
		}
		if err := os.Mkdir(up, mode|0o700); err != nil && !errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("stage %s: %w", rel, err)
		}
	}
	return nil
}
