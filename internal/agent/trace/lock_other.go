//go:build !unix

package trace

import "os"

// lockFile creates the lock file but cannot lock it here: two processes
// finding the same corrupt database at the same instant may both move a
// file aside (the second moves a fresh, empty store).
func lockFile(path string) (unlock func(), err error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	return func() { f.Close() }, nil
}
