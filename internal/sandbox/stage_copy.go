package sandbox

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// materialize writes the view of s into dst (which must not exist): a copy
// of the lower directory, cloned file by file where the filesystem can
// (reflink, clonefile), with the changes applied. Backends without an
// overlay use it.
func (s *Stage) materialize(dst string) error {
	if err := copyTree(s.lower, dst); err != nil {
		return fmt.Errorf("copy stage %s: %w", s.lower, err)
	}
	for _, c := range s.changes {
		p := filepath.Join(dst, filepath.FromSlash(c.Path))
		if err := os.RemoveAll(p); err != nil {
			return fmt.Errorf("apply stage %s: %w", c.Path, err)
		}
		if c.Delete {
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return fmt.Errorf("apply stage %s: %w", c.Path, err)
		}
		mode := c.Mode.Perm()
		if mode == 0 {
			mode = 0o644
		}
		if err := os.WriteFile(p, c.Content, mode); err != nil {
			return fmt.Errorf("apply stage %s: %w", c.Path, err)
		}
	}
	return nil
}

// copyTree copies a directory tree: regular files (cloned where possible),
// directories and symlinks. Other file types are skipped.
func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		to := filepath.Join(dst, rel)
		info, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case d.IsDir():
			return os.Mkdir(to, info.Mode().Perm()|0o700)
		case info.Mode()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			return os.Symlink(target, to)
		case info.Mode().IsRegular():
			return copyFile(p, to, info.Mode().Perm())
		}
		return nil
	})
}

func copyFile(src, dst string, mode fs.FileMode) error {
	if err := cloneFile(src, dst); err == nil {
		return nil
	} else if !errors.Is(err, errors.ErrUnsupported) {
		_ = os.Remove(dst)
	}
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
