package rootfs

import (
	"os"
	"path/filepath"
	"testing"
)

// TestProtectSkips: what Protect must not bind is not bound: a path
// missing below the host's tree (counted absent, even where a file of the
// same name exists on this machine's /), one whose target lies outside
// every writable root, and one naming a writable root exactly. Nothing is
// mounted, so nr's paths do not exist; a bind would fail the call. The
// containment tests (TestSpecProtectedPaths, tier_protected_linux_test.go
// in internal/sandbox) check the binds.
func TestProtectSkips(t *testing.T) {
	host := t.TempDir()
	for _, d := range []string{"/w/sub", "/ro"} {
		if err := os.MkdirAll(filepath.Join(host, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("/ro", filepath.Join(host, "w/out")); err != nil {
		t.Fatal(err)
	}
	nr := func(p string) string { return filepath.Join(host, "no-new-root", p) }
	writable := []string{"/w", "/w/sub"}
	done, absent, err := Protect(host, nr, writable, []string{"/w/.git", "/w/.vscode", "/w/out", "/w/sub", "/etc"})
	if err != nil || len(done) != 0 || absent != 3 {
		t.Errorf("Protect = %q, %d absent, %v; want nothing done, 3 absent (/w/.git, /w/.vscode, /etc), no error", done, absent, err)
	}
	if _, absent, err := Protect(host, nr, writable, []string{"/w/sub/x", "/w"}); err != nil || absent != 1 {
		t.Errorf("a writable root itself was bound, or a missing path not counted: %d absent, %v", absent, err)
	}
	// Control: a present path in a writable root is bound, which here
	// fails (the new root does not exist).
	if err := os.Mkdir(filepath.Join(host, "w/.git"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, _, err := Protect(host, nr, writable, []string{"/w/.git"}); err == nil {
		t.Error("a present protected path was not bound")
	}
}
