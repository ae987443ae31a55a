package sandbox

import (
	"os"
	"runtime"
	"strings"
)

// stagePrefix starts the hidden first argument with which this binary
// re-executes itself as a sandbox stage (as runc does with "init").
const stagePrefix = "__ioh_sandbox_"

// floorArg is the floor backend's stage: apply rlimits, then exec.
const floorArg = stagePrefix + "floor"

// Init runs a re-executed sandbox stage when this process is one, and then
// never returns. Otherwise it returns false at once. main, and the TestMain
// of every package whose tests run the sandbox, must call it first.
func Init() bool {
	if len(os.Args) < 2 || !strings.HasPrefix(os.Args[1], stagePrefix) {
		return false
	}
	runtime.LockOSThread()
	os.Exit(stageMain(os.Args[1]))
	return true
}

// init dispatches a re-executed stage before the rest of the binary's
// package initializers run: Go initializes packages in import-path order,
// so the sandbox (a leaf) comes before most of the heavy ones. runc does
// the same for the same reason, with a C constructor. Init, called first
// by main and TestMain, stays as the documented hook.
func init() {
	Init()
}
