package trace

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Recovery says what Open did with a corrupt database.
type Recovery struct {
	Path    string    // the database, now a fresh store
	MovedTo string    // where the corrupt database file is now
	Moved   []string  // every file moved aside (database, -wal, -shm), by new name
	Cause   string    // what the check found
	Time    time.Time // when it was moved
}

// String is the message to show the user, loudly.
func (r *Recovery) String() string {
	return fmt.Sprintf("the trace database %s was corrupt (%s): moved it to %s and started a fresh, empty store; "+
		"the runs recorded before are in the moved file (open it with sqlite3 to salvage them)", r.Path, r.Cause, r.MovedTo)
}

// moveAsideCorrupt moves the corrupt database at path and its -wal and
// -shm files to path.corrupt-<UTC time>[-wal|-shm]. It holds a lock file
// while it works and checks the database once more under the lock: a
// process that opened the same corrupt file at the same moment must not
// move aside the fresh store another one has just started.
func moveAsideCorrupt(ctx context.Context, path string, cause error, busy time.Duration) (*Recovery, error) {
	unlock, err := lockFile(path + ".lock")
	if err != nil {
		return nil, &StorageError{Dir: filepath.Dir(path), Err: fmt.Errorf("lock %s to move a corrupt database aside: %w", path, err)}
	}
	defer unlock()
	db, err := openChecked(ctx, path, "FULL", busy)
	if err == nil {
		db.Close() // another process replaced it already
		return nil, nil
	}
	if !errors.Is(err, ErrCorrupt) {
		return nil, err
	}
	now := time.Now().UTC()
	base := path + ".corrupt-" + now.Format("20060102T150405.000Z")
	rec := &Recovery{Path: path, MovedTo: base, Cause: corruptCause(cause), Time: now}
	for _, suf := range append([]string{""}, sidecars...) {
		from, to := path+suf, base+suf
		if err := os.Rename(from, to); err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				continue
			}
			return nil, &StorageError{Dir: filepath.Dir(path), Err: fmt.Errorf("move corrupt %s aside: %w", from, err)}
		}
		rec.Moved = append(rec.Moved, to)
	}
	return rec, nil
}

// corruptCause is the check's finding without the sentinel's own words.
func corruptCause(err error) string {
	s := err.Error()
	if i := strings.Index(s, ErrCorrupt.Error()+": "); i >= 0 {
		s = s[i+len(ErrCorrupt.Error())+2:]
	}
	return s
}
