// Package sandboxtest is what the tests that run the real sandbox share:
// whether this machine can run what a test needs and, when not, the skip
// (or, in CI, the failure) that says why; the root, ordinary-user and
// user-namespace facts; the environment of a re-run of a test binary,
// with the race runtime told not to sleep at exit; and directories the
// sandbox sees from inside.
//
// It imports nothing of the module, so the sandbox package's own tests
// (package sandbox) use it as every other package's tests do; what needs
// the sandbox (a tier's probe) is handed in by the caller. Only tests
// import it (archtest).
package sandboxtest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// CI reports whether the tests run in CI (CI is set), where every kernel
// feature and tool the tests use is there, so a missing one is a failure.
func CI() bool { return os.Getenv("CI") != "" }

// Unavailable ends a test that this machine cannot run: it fails it in CI
// and skips it elsewhere, with the reason in both.
func Unavailable(t testing.TB, format string, args ...any) {
	t.Helper()
	why := fmt.Sprintf(format, args...)
	if CI() {
		t.Fatalf("%s (in CI, where it must be available)", why)
	}
	t.Skip(why)
}

// IsRoot reports whether the tests run as root.
func IsRoot() bool { return os.Geteuid() == 0 }

// NeedRoot skips a test (or the rest of a subtest) that only root can
// run, saying why.
func NeedRoot(t testing.TB, why string) {
	t.Helper()
	if !IsRoot() {
		t.Skip(why)
	}
}

// SkipInShort skips, under -short (`make check`), a test that re-runs a
// suite in another mode or loads every core for its length; `make test`
// runs it in full. what names what is left out.
func SkipInShort(t testing.TB, what string) {
	t.Helper()
	if testing.Short() {
		t.Skipf("-short: %s is left to the full run (make test)", what)
	}
}

// Dir makes a directory that a contained run sees (under /var/tmp: a run
// gets a private /tmp of its own), open to every user so a re-run as an
// ordinary user can use it, and removed after the test.
func Dir(t testing.TB) string {
	t.Helper()
	dir, err := os.MkdirTemp("/var/tmp", "ioh-test-")
	if err != nil {
		t.Fatalf("a directory the sandbox sees: %v", err)
	}
	os.Chmod(dir, 0o777)
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// Deadline is a context that ends after d or with the test, whichever is
// first: a contained run or a re-run that hangs fails the test instead of
// the whole binary's timeout.
func Deadline(t testing.TB, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// TreeListing is every file under dir with its size, mode and
// modification time, one a line: two listings compare equal only when
// nothing under dir was written, added, removed or re-moded between them.
func TreeListing(t testing.TB, dir string) string {
	t.Helper()
	var b strings.Builder
	err := filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		fmt.Fprintf(&b, "%s %d %v %d\n", strings.TrimPrefix(p, dir), fi.Size(), fi.Mode(), fi.ModTime().UnixNano())
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}
