// Package testenv gives every test binary of the module a world of its own:
// HOME, the XDG directories and ioh-lsp's state directory point at fresh
// temporary directories, so a test never reads the user's real
// ~/.config/ioh/config.yaml (or writes the user's trace databases), and the
// provider keys of the developer's shell never reach a test. The Go build
// and module caches stay where they were, so builds the tests start (go
// test inside the sandbox, go build of helpers) stay warm.
//
// Every package's TestMain calls Main (given sandbox.Init where the
// package's tests run the sandbox); TestEveryTestBinaryIsIsolated fails
// for a package whose tests do not.
package testenv

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ioh-lsp/ioh-lsp/internal/sandbox/sandboxtest"
)

// RootEnv names the variable that holds the temporary root Isolate made;
// Check compares the other variables against it.
const RootEnv = "IOH_TESTENV_ROOT"

// Owned lists the variables Isolate points into its root, each with its
// directory below the root.
var Owned = map[string]string{
	"HOME":            "home",
	"XDG_CONFIG_HOME": "config",
	"XDG_STATE_HOME":  "state",
	"XDG_DATA_HOME":   "data",
	"IOH_STATE_DIR":   "ioh-state",
}

// Dropped lists variables a test must not inherit: the providers' API keys
// (no test talks to a live model) and the test-only knobs of the binary.
var Dropped = []string{
	"ANTHROPIC_API_KEY", "OPENAI_API_KEY", "OPENROUTER_API_KEY",
	"IOH_TEST_MODEL_DELAY",
}

// goKept are the Go toolchain's locations that follow HOME or the XDG
// directories by default; Isolate pins them to their current values.
var goKept = []string{"GOCACHE", "GOMODCACHE", "GOPATH", "GOENV"}

// Main isolates the environment, runs the tests and removes the temporary
// root. Its result is the exit code for os.Exit.
//
// A test binary that the sandbox re-executes as its stages (one whose
// tests run the real sandbox) passes the sandbox's entry as init
// (sandbox.Init, or an embedder's ioh.Init): Main calls it first, as main
// does, and it does not return in a stage.
func Main(m *testing.M, init ...func() bool) int {
	for _, f := range init {
		if f() {
			return 0
		}
	}
	cleanup, err := Isolate()
	if err != nil {
		fmt.Fprintf(os.Stderr, "testenv: %v\n", err)
		return 2
	}
	code := m.Run()
	cleanup()
	return code
}

// Isolate points HOME, XDG_CONFIG_HOME, XDG_STATE_HOME, XDG_DATA_HOME and
// IOH_STATE_DIR at fresh directories under a new temporary root, unsets
// the variables in Dropped, and pins the Go toolchain's caches first. The
// cleanup removes the root.
//
// A test binary that a test started (a helper process, which often ends
// with os.Exit or is killed, so its cleanup never runs) makes its root
// inside its parent's, when it inherited one it can write: the parent's
// cleanup then removes both.
func Isolate() (cleanup func(), err error) {
	if err := pinGo(); err != nil {
		return nil, err
	}
	root, err := "", errors.New("no parent root")
	if parent := os.Getenv(RootEnv); filepath.IsAbs(parent) {
		root, err = os.MkdirTemp(parent, "ioh-testenv-")
	}
	if err != nil {
		root, err = os.MkdirTemp("", "ioh-testenv-")
	}
	if err != nil {
		return nil, fmt.Errorf("isolate: %w", err)
	}
	if real, err := filepath.EvalSymlinks(root); err == nil {
		root = real
	}
	for k, sub := range Owned {
		dir := filepath.Join(root, sub)
		if err := os.MkdirAll(dir, 0o700); err != nil {
			os.RemoveAll(root)
			return nil, fmt.Errorf("isolate: %w", err)
		}
		os.Setenv(k, dir)
	}
	os.Setenv(RootEnv, root)
	for _, k := range Dropped {
		os.Unsetenv(k)
	}
	sandboxtest.QuietRace() // race-built children do not sleep a second at exit
	return func() { os.RemoveAll(root) }, nil
}

// Check reports an error unless the environment is the one Isolate made:
// every owned variable inside the root and no dropped variable set.
func Check() error {
	root := os.Getenv(RootEnv)
	if root == "" {
		return errors.New("the environment is not isolated: TestMain must call testenv.Main")
	}
	for k := range Owned {
		v := os.Getenv(k)
		if v == "" || !inside(root, v) {
			return fmt.Errorf("%s=%q is outside the test's own root %s", k, v, root)
		}
	}
	for _, k := range Dropped {
		if _, ok := os.LookupEnv(k); ok {
			return fmt.Errorf("%s is set in the test's environment", k)
		}
	}
	return nil
}

func inside(root, p string) bool {
	rel, err := filepath.Rel(root, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

// pinGo sets the Go toolchain's cache variables that are unset to the
// values the go command reports now, so moving HOME does not move them.
// Without a go command the defaults are computed as the go command does.
func pinGo() error {
	var missing []string
	for _, k := range goKept {
		if os.Getenv(k) == "" {
			missing = append(missing, k)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	vals := map[string]string{}
	out, err := exec.Command("go", append([]string{"env", "-json"}, missing...)...).Output()
	if err == nil {
		if err := json.Unmarshal(out, &vals); err != nil {
			return fmt.Errorf("isolate: read go env: %w", err)
		}
	} else {
		vals = goDefaults()
	}
	for _, k := range missing {
		if v := vals[k]; v != "" {
			os.Setenv(k, v)
		}
	}
	return nil
}

// goDefaults are the go command's defaults for goKept, for a machine
// without the go command on PATH.
func goDefaults() map[string]string {
	vals := map[string]string{}
	if d, err := os.UserCacheDir(); err == nil {
		vals["GOCACHE"] = filepath.Join(d, "go-build")
	}
	if d, err := os.UserConfigDir(); err == nil {
		vals["GOENV"] = filepath.Join(d, "go", "env")
	}
	if h, err := os.UserHomeDir(); err == nil {
		gopath := os.Getenv("GOPATH")
		if gopath == "" {
			gopath = filepath.Join(h, "go")
			vals["GOPATH"] = gopath
		}
		vals["GOMODCACHE"] = filepath.Join(strings.Split(gopath, string(os.PathListSeparator))[0], "pkg", "mod")
	}
	return vals
}
