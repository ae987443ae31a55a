package trace

import (
	"errors"
	"fmt"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

var (
	// ErrNotFound: no run with that id.
	ErrNotFound = errors.New("run not found")
	// ErrLeased: another live process drives the run.
	ErrLeased = errors.New("run is leased by another process")
	// ErrNewerSchema: the database was written by a newer build.
	ErrNewerSchema = errors.New("trace database is newer than this build")
	// ErrStepExists: a step with that number is already committed (a
	// resumed process must never write a step twice).
	ErrStepExists = errors.New("step already committed")
	// ErrStorage: the store could not read or write its files (disk full,
	// I/O error, read-only or unreadable files, a lock held too long). It
	// is not the run's fault nor the provider's: what was committed stays,
	// and the run can be resumed once the cause is fixed.
	ErrStorage = errors.New("trace storage failed")
	// ErrStateDir: the state directory is not configured usably (a
	// relative IOH_STATE_DIR, no HOME): a setup error the user fixes in
	// the environment.
	ErrStateDir = errors.New("no usable state directory")
	// ErrCorrupt: the database file is not a healthy SQLite database.
	ErrCorrupt = errors.New("trace database is corrupt")
)

// StorageError is a storage failure of the store in Dir (ErrStorage).
type StorageError struct {
	Dir string // the state directory holding the database
	Err error
}

func (e *StorageError) Error() string {
	return fmt.Sprintf("trace store in %s failed: %v", e.Dir, e.Err)
}

func (e *StorageError) Unwrap() error { return e.Err }

// Is makes errors.Is(err, ErrStorage) hold.
func (e *StorageError) Is(target error) bool { return target == ErrStorage }

// errClass is what an SQLite error says about the database file.
type errClass int

const (
	classOther   errClass = iota // a logic error (constraint, SQL), or not from SQLite
	classStorage                 // transient or environmental: full, I/O, busy, permission
	classCorrupt                 // the file is damaged or not a database
)

// classify sorts err by its SQLite result code (the primary code, the low
// byte of an extended one). It is the one place that tells "corrupt" from
// "busy" or "full": only SQLITE_CORRUPT and SQLITE_NOTADB mean a damaged
// file; a store is never moved aside for anything else.
func classify(err error) errClass {
	var se *sqlite.Error
	if !errors.As(err, &se) {
		return classOther
	}
	switch se.Code() & 0xff {
	case sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB:
		return classCorrupt
	case sqlite3.SQLITE_FULL, sqlite3.SQLITE_IOERR, sqlite3.SQLITE_READONLY, sqlite3.SQLITE_CANTOPEN,
		sqlite3.SQLITE_PERM, sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED, sqlite3.SQLITE_NOMEM,
		sqlite3.SQLITE_PROTOCOL, sqlite3.SQLITE_NOLFS, sqlite3.SQLITE_AUTH:
		return classStorage
	}
	return classOther
}

// isBusy reports an SQLite error that says another connection holds a
// lock (SQLITE_BUSY, SQLITE_LOCKED): worth waiting for, never corruption.
func isBusy(err error) bool {
	var se *sqlite.Error
	if !errors.As(err, &se) {
		return false
	}
	c := se.Code() & 0xff
	return c == sqlite3.SQLITE_BUSY || c == sqlite3.SQLITE_LOCKED
}

// storageErr wraps err as a StorageError of the store in dir when it is a
// storage or corruption failure; other errors pass unchanged.
func storageErr(dir string, err error) error {
	if err == nil || errors.Is(err, ErrStorage) {
		return err
	}
	if classify(err) == classOther {
		return err
	}
	return &StorageError{Dir: dir, Err: err}
}
