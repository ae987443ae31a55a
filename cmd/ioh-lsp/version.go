package main

import (
	"context"
	"fmt"
	"runtime"
	"runtime/debug"
)

// version is set at link time by the Makefile (-X main.version=...).
var version = "dev"

func cmdVersion(_ context.Context, env *cliEnv, args []string) int {
	fs := newFlagSet("version", env.stderr)
	pos, err := parseFlags(fs, args)
	if err == nil {
		err = wantArgs(pos, 0, 0)
	}
	if err != nil {
		return usageError(env, "version", err)
	}
	fmt.Fprintf(env.stdout, "ioh-lsp %s\n%s\n%s %s/%s\n", versionOf(version), commitLine(), runtime.Version(), runtime.GOOS, runtime.GOARCH)
	return exitOK
}

// versionOf is the linked-in version, else the module version `go
// install ...@vX` records (a "dev" build of a checkout stays dev).
func versionOf(linked string) string {
	if bi, ok := debug.ReadBuildInfo(); ok && linked == "dev" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return linked
}

// commitLine says which commit the binary was built from, when, and
// whether the tree had edits; without VCS stamping (-buildvcs=false, a
// build outside a checkout) it says so and how to get it, instead of a
// bare "unknown".
func commitLine() string {
	var commit, at, dirty string
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				commit = s.Value
			case "vcs.time":
				at = " (" + s.Value + ")"
			case "vcs.modified":
				if s.Value == "true" {
					dirty = "+dirty"
				}
			}
		}
	}
	if commit == "" {
		return "commit not recorded: built without VCS stamping (-buildvcs=false, or outside a git checkout); `make build` in a checkout records it"
	}
	return "commit " + commit + dirty + at
}
