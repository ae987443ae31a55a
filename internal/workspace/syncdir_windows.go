//go:build windows

package workspace

// syncDir is a no-op on Windows, where directories cannot be opened for
// fsync; NTFS journals the rename itself.
func syncDir(string) error { return nil }
