package workspace

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
)

func statMode(abs string) (fs.FileMode, error) {
	fi, err := os.Stat(abs)
	if err != nil {
		return 0, err
	}
	return fi.Mode().Perm(), nil
}

// diskHash returns the hash of a file as the workspace sees it now (""
// when it does not exist).
func (c *ChangeSet) diskHash(k string) (string, error) {
	data, err := c.root.ReadFile(k)
	switch {
	case errors.Is(err, fs.ErrNotExist), errors.Is(err, syscallENOTDIR):
		return "", nil
	case err != nil:
		return "", err
	}
	return hashOf(data), nil
}

// conflicts lists changed files whose current state differs from their
// base. Callers hold c.mu.
func (c *ChangeSet) conflicts() ([]string, error) {
	var out []string
	for k, ch := range c.changes {
		h, err := c.diskHash(k)
		if err != nil {
			return nil, fmt.Errorf("check %s: %w", k, err)
		}
		if h != ch.BaseHash {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out, nil
}

// Conflicts lists the changed files whose content in the workspace (open
// documents over the disk) no longer matches the base they were changed
// from.
func (c *ChangeSet) Conflicts() ([]string, error) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.conflicts()
}

// backup is a file's state before Apply touched it.
type backup struct {
	abs    string
	data   []byte
	mode   fs.FileMode
	exists bool
	dirs   []string // directories Apply created for the file, deepest first
	failed bool     // the write failed: the file itself was not replaced
}

// missingDirs lists the ancestors of abs that do not exist yet, deepest
// first, stopping at the root.
func (c *ChangeSet) missingDirs(abs string) []string {
	var out []string
	for d := filepath.Dir(abs); d != c.root.dir; d = filepath.Dir(d) {
		if _, ok := within(c.root.dir, d); !ok {
			break
		}
		if _, err := os.Lstat(d); err == nil {
			break
		}
		out = append(out, d)
	}
	return out
}

// Apply writes every pending change to disk. Each file is replaced
// atomically (temp file in the same directory, fsync, rename, directory
// fsync). If any base changed on disk it refuses with a *ConflictError
// naming the files and writes nothing; if a write fails mid-way the files
// already replaced are restored. On success the change set is empty.
func (c *ChangeSet) Apply() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	conf, err := c.conflicts()
	if err != nil {
		return fmt.Errorf("apply: %w", err)
	}
	if len(conf) > 0 {
		return &ConflictError{Files: conf}
	}
	keys := make([]string, 0, len(c.changes))
	for k := range c.changes {
		keys = append(keys, k)
	}
	// Deletions first so a rename onto a path deleted here works.
	slices.SortFunc(keys, func(a, b string) int {
		da, db := c.changes[a].Op == OpDelete, c.changes[b].Op == OpDelete
		if da != db {
			if da {
				return -1
			}
			return 1
		}
		if a < b {
			return -1
		}
		if a > b {
			return 1
		}
		return 0
	})
	var done []backup
	for _, k := range keys {
		ch := c.changes[k]
		abs, err := c.root.Resolve(k)
		if err != nil {
			return c.rollback(done, fmt.Errorf("apply %s: %w", k, err))
		}
		// k was recorded resolved (the path the policy judged); a symlink
		// put on it since would send the write elsewhere.
		if now, err := c.root.Rel(abs); err != nil || now != k {
			return c.rollback(done, fmt.Errorf("apply %s: it now resolves to %s through a symlink: %w", k, now, &ConflictError{Files: []string{k}}))
		}
		b := backup{abs: abs, dirs: c.missingDirs(abs)}
		if fi, err := os.Lstat(abs); err == nil {
			if b.data, err = os.ReadFile(abs); err != nil {
				return c.rollback(done, fmt.Errorf("apply %s: %w", k, err))
			}
			b.mode, b.exists = fi.Mode().Perm(), true
		}
		if ch.Op == OpDelete {
			err = os.Remove(abs)
			if err == nil {
				err = syncDir(filepath.Dir(abs))
			}
		} else {
			err = writeAtomic(abs, ch.Content, ch.Mode)
		}
		if err != nil {
			b.failed = true
			return c.rollback(append(done, b), fmt.Errorf("apply %s: %w", k, err))
		}
		done = append(done, b)
	}
	c.changes = map[string]*Change{}
	c.baseDoc = map[string][]byte{}
	c.bases = map[string]string{}
	c.origin = nil
	return nil
}

// rollback restores the files already written, newest first, removes the
// directories Apply created, and returns err (joined with any restore
// failure). The last entry may be the file whose write failed; only its
// directories are removed.
func (c *ChangeSet) rollback(done []backup, err error) error {
	for i := len(done) - 1; i >= 0; i-- {
		b := done[i]
		var rerr error
		switch {
		case b.failed:
		case b.exists:
			rerr = writeAtomic(b.abs, b.data, b.mode)
		default:
			if e := os.Remove(b.abs); e != nil && !errors.Is(e, fs.ErrNotExist) {
				rerr = e
			}
		}
		if rerr != nil {
			err = errors.Join(err, fmt.Errorf("roll back %s: %w", b.abs, rerr))
		}
		for _, d := range b.dirs {
			os.Remove(d) // only succeeds while empty
		}
	}
	return err
}

// writeAtomic replaces abs with data: a temp file in the same directory,
// fsync, rename over abs, fsync of the directory. Missing parent
// directories are created.
func writeAtomic(abs string, data []byte, mode fs.FileMode) error {
	dir := filepath.Dir(abs)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, ".ioh-*.tmp")
	if err != nil {
		return err
	}
	tmp := f.Name()
	ok := false
	defer func() {
		if !ok {
			f.Close()
			os.Remove(tmp)
		}
	}()
	if _, err := f.Write(data); err != nil {
		return err
	}
	if mode == 0 {
		mode = defaultMode
	}
	if err := f.Chmod(mode); err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp, abs); err != nil {
		return err
	}
	ok = true
	return syncDir(dir)
}
