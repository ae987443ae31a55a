package trace

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"

	"github.com/ioh-lsp/ioh-lsp/internal/agent/redact"
)

// ErrOlderSchema: the database has a schema older than this build's,
// which only a writer's Open migrates (OpenReadOnly).
var ErrOlderSchema = errors.New("the trace database has an older schema")

// OpenReadOnly opens the existing database at path for reading only
// (SQLite's mode=ro): nothing is created, migrated, narrowed or moved
// aside, so a reader (`ioh-lsp runs`, `trace`) works beside a process
// that writes and on files it may not write, and never changes the file
// under it. (In a read-only directory SQLite reads a WAL database only
// while its -wal and -shm files exist: it cannot create them.) What Open would have to write for is an error: a
// missing file a StorageError (fs.ErrNotExist), a damaged one ErrCorrupt
// (quick_check, as Open runs it), an older schema ErrOlderSchema. What
// the store is asked to write fails with SQLite's read-only error.
func OpenReadOnly(ctx context.Context, path string) (*Store, error) {
	dir := filepath.Dir(path)
	if _, err := os.Stat(path); err != nil {
		return nil, &StorageError{Dir: dir, Err: err}
	}
	q := url.Values{}
	q.Add("_pragma", "busy_timeout(10000)")
	q.Set("mode", "ro")
	db, err := sql.Open("sqlite", "file:"+path+"?"+q.Encode())
	if err != nil {
		return nil, storageErr(dir, err)
	}
	err = checkHealth(ctx, db)
	var v int
	if err == nil {
		v, err = schemaVersion(ctx, db)
	}
	if err == nil {
		if err = checkVersion(v); err == nil && v < len(migrations) {
			err = fmt.Errorf("%w: schema %d, this build reads %d", ErrOlderSchema, v, len(migrations))
		}
	}
	if classify(err) == classCorrupt && !errors.Is(err, ErrCorrupt) {
		err = fmt.Errorf("%w: %w", ErrCorrupt, err)
	}
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("open trace database %s for reading: %w", path, storageErr(dir, err))
	}
	s := &Store{db: db, path: path, redact: redact.New(nil)}
	if err := s.prepare(ctx); err != nil { // prepared, not run: a write fails when run
		db.Close()
		return nil, fmt.Errorf("open trace database %s for reading: %w", path, storageErr(dir, err))
	}
	return s, nil
}
