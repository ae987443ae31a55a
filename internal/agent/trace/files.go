package trace

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// sidecars are the files SQLite keeps next to a database (WAL mode uses
// -wal and -shm; -journal only appears in rollback mode).
var sidecars = []string{"-wal", "-shm", "-journal"}

// makePrivateDir creates dir and any missing parent 0700, whatever the
// umask. A directory that already exists keeps its mode: IOH_STATE_DIR may
// name a directory the user chose.
func makePrivateDir(dir string) error {
	var missing []string
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(d); err == nil {
			break
		} else if !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		missing = append(missing, d)
		if filepath.Dir(d) == d {
			break
		}
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	for _, d := range missing {
		if err := os.Chmod(d, 0o700); err != nil {
			return err
		}
	}
	return nil
}

// privateFiles creates the database file 0600 when it is missing (SQLite
// gives the -wal and -shm files the database's mode) and narrows the
// database and its sidecars to 0600 when an older build or a umask left
// them wider.
func privateFiles(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("create database file: %w", err)
	}
	f.Close()
	for _, p := range append([]string{path}, withSuffixes(path, sidecars)...) {
		fi, err := os.Stat(p)
		if err != nil {
			continue
		}
		if fi.Mode().Perm() != 0o600 {
			if err := os.Chmod(p, 0o600); err != nil {
				return fmt.Errorf("make %s private: %w", p, err)
			}
		}
	}
	return nil
}

func withSuffixes(path string, suffixes []string) []string {
	out := make([]string, len(suffixes))
	for i, s := range suffixes {
		out[i] = path + s
	}
	return out
}
