package sandbox

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// helperArg starts a probe's argv ([probe, helperArg, action, args...]):
// the probe skips it, and the test binary, given it first, runs one of
// moreHelpers instead of the tests.
const helperArg = "__ioh_test_helper"

// moreHelpers are helper actions the probe (sandbox/internal/probe) does
// not have: those that need this package's code, registered by the tests
// that use them. The probe executes the test binary beside it for them.
var moreHelpers = map[string]func(a []string) error{}

// helperMain runs one of moreHelpers: it exits 0 when it worked, 1 when
// it was refused.
func helperMain(args []string) int {
	if len(args) == 0 {
		fmt.Fprintln(os.Stderr, "helper: no action")
		return 2
	}
	f, ok := moreHelpers[args[0]]
	if !ok {
		fmt.Fprintf(os.Stderr, "helper: unknown action %q (the probe's own are in internal/sandbox/internal/probe)\n", args[0])
		return 2
	}
	if err := f(args[1:]); err != nil {
		fmt.Fprintf(os.Stderr, "helper %s: %v\n", args[0], err)
		return 1
	}
	return 0
}

var (
	helperOnce sync.Once
	helperDir  string
	helperMade bool // helperDir is this process's, removed at its end
	helperErr  error
)

// helperPath is the probe (sandbox/internal/probe), built without the race
// detector once per test binary, with a copy of the test binary beside it
// (selfPath), where the sandbox can see them: the test binary itself
// lives under the host /tmp, which the sandbox replaces with a private
// one. A re-run (as another user, without user namespaces) takes its
// parent's, beside the test binary it is.
func helperPath(t *testing.T) string {
	t.Helper()
	return filepath.Join(helperFiles(t), "probe")
}

// selfPath is the copy of the test binary beside the probe: what the
// re-runs of the suite execute, and what runs moreHelpers.
func selfPath(t *testing.T) string {
	t.Helper()
	return filepath.Join(helperFiles(t), "helper")
}

// helperFiles makes the directory of the probe and the copy of the test
// binary once, and returns it.
func helperFiles(t *testing.T) string {
	t.Helper()
	dir, err := helperFilesErr()
	if err != nil {
		t.Fatalf("helper binaries: %v", err)
	}
	return dir
}

// helperFilesErr is helperFiles for TestMain, before any test runs.
func helperFilesErr() (string, error) {
	helperOnce.Do(func() {
		if !rerun() {
			helperDir, helperErr = makeHelperFiles()
			helperMade = helperErr == nil
			return
		}
		self, err := os.Executable()
		helperDir, helperErr = filepath.Dir(self), err
	})
	return helperDir, helperErr
}

// rerun reports whether this test binary is a re-run of the suite (as
// another user, without user namespaces), started from its parent's
// helper directory.
func rerun() bool {
	return os.Getenv(asUserEnv) != "" || os.Getenv(asUserSuiteEnv) != ""
}

func makeHelperFiles() (string, error) {
	self, err := os.Executable()
	if err != nil {
		return "", err
	}
	dir, err := os.MkdirTemp("/var/tmp", "ioh-sandbox-helper-")
	if err != nil {
		return "", err
	}
	os.Chmod(dir, 0o755)
	in, err := os.ReadFile(self)
	if err == nil {
		err = os.WriteFile(filepath.Join(dir, "helper"), in, 0o755)
	}
	if err == nil {
		err = goBuild(filepath.Join(dir, "probe"), "./internal/sandbox/internal/probe")
	}
	if err != nil {
		os.RemoveAll(dir)
		return "", err
	}
	return dir, nil
}

// goBuild builds the module's package pkg as out with `make build`'s
// flags (-trimpath, without cgo) and without the race detector, so the
// tests and `make build` share the cached packages, and the init program
// built here is the one `make build` makes of the same source.
func goBuild(out, pkg string, flags ...string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	args := append(append([]string{"build", "-trimpath"}, flags...), "-o", out, pkg)
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	cmd.Dir = moduleRoot()
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build %s: %v\n%s", pkg, err, b)
	}
	return nil
}

func cleanupHelper() {
	if helperMade {
		os.RemoveAll(helperDir)
	}
}
