package sandbox

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ioh-lsp/ioh-lsp/internal/sandbox/sandboxtest"
)

// TestRemoveTree: a tree whose directories were left without their
// owner's write or search permission is removed whole; a symlink in it is
// removed, and the directory it points to is left as it was.
func TestRemoveTree(t *testing.T) {
	outside := sandboxtest.Dir(t)
	if err := os.WriteFile(filepath.Join(outside, "keep"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(outside, 0o555); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(outside, 0o777) })
	d := filepath.Join(sandboxtest.Dir(t), "private")
	writeTree(t, d, map[string]string{"tmp/d/f": "x", "tmp/d/e/g": "y", "home/z/f": "z"})
	if err := os.Symlink(outside, filepath.Join(d, "tmp", "d", "link")); err != nil {
		t.Fatal(err)
	}
	for p, mode := range map[string]os.FileMode{"tmp/d/e": 0o000, "tmp/d": 0o500, "home/z": 0o100} {
		if err := os.Chmod(filepath.Join(d, p), mode); err != nil {
			t.Fatal(err)
		}
	}
	if err := removeTree(d); err != nil {
		t.Errorf("removeTree: %v", err)
	}
	if _, err := os.Lstat(d); !os.IsNotExist(err) {
		t.Errorf("%s left behind (%v)", d, err)
	}
	if st, err := os.Stat(outside); err != nil || st.Mode().Perm() != 0o555 {
		t.Errorf("the symlink's target changed: %v %v", st.Mode(), err)
	}
	if _, err := os.Stat(filepath.Join(outside, "keep")); err != nil {
		t.Errorf("the symlink's target lost its file: %v", err)
	}
}

// TestContainPrivateDirRemoved: the landlock tier's private directory
// (HOME and TMPDIR) is gone after a run that left a directory in it
// without write permission (as an ordinary user in the re-run: root
// removes it regardless).
func TestContainPrivateDirRemoved(t *testing.T) {
	tiersHere(t) // skips where the landlock tier cannot run
	work := sandboxtest.Dir(t)
	out, output := runTier(t, Spec{Argv: []string{"sh", "-c", `mkdir "$TMPDIR/d" && echo x >"$TMPDIR/d/f" && chmod 500 "$TMPDIR/d" && echo "$TMPDIR"`},
		Dir: work, Writable: []string{work}, Backend: BackendLandlock})
	if out.ExitCode != 0 {
		t.Fatalf("exit %d: %s", out.ExitCode, output)
	}
	tmp := strings.TrimSpace(output)
	if filepath.Base(tmp) != "tmp" || !strings.HasPrefix(filepath.Base(filepath.Dir(tmp)), privateDirPrefix) || strings.Contains(tmp, "ioh") {
		t.Fatalf("TMPDIR %q is not a private directory", tmp)
	}
	testPool.wait()
	if _, err := os.Lstat(filepath.Dir(tmp)); !os.IsNotExist(err) {
		t.Errorf("the private directory %s outlived its run (%v)", filepath.Dir(tmp), err)
		removeTree(filepath.Dir(tmp))
	}
}
