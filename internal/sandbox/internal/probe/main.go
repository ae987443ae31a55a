// Command probe is what the sandbox's containment tests run inside the
// sandbox (and, as each case's control, outside it): it tries one thing
// and exits 0 when it worked, 1 when it was refused (the error on
// stderr), 2 when it was called wrongly.
//
//	probe [__ioh_test_helper] ACTION ARG...
//
// It is a program of its own, built once per test binary without the race
// detector (sandbox/helper_linux_test.go), as bubblewrap's tests use a
// small C probe: the race-built test binary it replaces starts in ~37 ms
// against ~3 ms, and reserves more address space than a small memory
// cap's backstop leaves. The optional first argument keeps the argv the
// tests used when the test binary itself was the probe.
//
// An action it does not know (one that needs the sandbox package, or one
// a test file registers in moreHelpers) runs in the copy of the test
// binary beside it, named testBinary, which the probe executes in its
// place with the same arguments.
package main

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
)

// helperArg is the argument the tests put before the action.
const helperArg = "__ioh_test_helper"

// action is one probe: at least args arguments, and what it tries.
type action struct {
	args int
	do   func(a []string) error
}

func main() {
	os.Exit(run(os.Args[1:]))
}

func run(args []string) int {
	if len(args) > 0 && args[0] == helperArg {
		args = args[1:]
	}
	if len(args) == 0 {
		fmt.Fprintf(os.Stderr, "usage: probe ACTION ARG...; actions: %s\n", names())
		return 2
	}
	act, ok := actions[args[0]]
	if !ok {
		err := delegate(args)
		fmt.Fprintf(os.Stderr, "probe: unknown action %q (%v); actions: %s\n", args[0], err, names())
		return 2
	}
	if len(args)-1 < act.args {
		fmt.Fprintf(os.Stderr, "probe: %s takes %d arguments, got %d\n", args[0], act.args, len(args)-1)
		return 2
	}
	if err := act.do(args[1:]); err != nil {
		fmt.Fprintf(os.Stderr, "helper %s: %v\n", args[0], err)
		return 1
	}
	return 0
}

// testBinary is the copy of the test binary beside the probe.
const testBinary = "helper"

// delegate executes the test binary beside the probe in its place, with
// args; it returns only when it could not.
func delegate(args []string) error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	test := filepath.Join(filepath.Dir(self), testBinary)
	return syscall.Exec(test, append([]string{test, helperArg}, args...), os.Environ())
}

func names() string {
	var n []string
	for k := range actions {
		n = append(n, k)
	}
	sort.Strings(n)
	return strings.Join(n, " ")
}
