//go:build !windows

package workspace

import "os"

// syncDir flushes a directory's entries so a rename survives a crash.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
