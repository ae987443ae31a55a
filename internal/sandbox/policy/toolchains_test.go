package policy

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestKeepToolchainDirs: a home, a home's direct child (but a bin) and /
// are never toolchain directories of the view.
func TestKeepToolchainDirs(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	got := keepToolchainDirs([]string{home, filepath.Join(home, ".local"), filepath.Join(home, "bin"), filepath.Join(home, ".local", "bin"),
		"/", "/home", "relative/bin", "/usr/local/go/bin", "/sbin"})
	want := []string{filepath.Join(home, "bin"), filepath.Join(home, ".local", "bin"), "/usr/local/go/bin", "/sbin"}
	if strings.Join(got, ":") != strings.Join(want, ":") {
		t.Errorf("keepToolchainDirs = %q, want %q", got, want)
	}
}
