package sandbox

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"

	"github.com/ioh-lsp/ioh-lsp/internal/sandbox/internal/initprog"
)

// InitProgramName is the small init program (cmd/ioh-sandbox-init) that
// runs the re-executed sandbox stages (PID 1, the exec stage, the landlock
// runner, the spawn stage) instead of the whole binary: `make build` puts
// it next to bin/ioh-lsp. A stage of the whole binary maps and
// initializes ten times the code; the small one starts about as fast as
// a minimal Go program.
const InitProgramName = initprog.Name

// initProgramHash ties this binary to the init program built with it:
// the SHA-256 (hex) of its content. `make build` and `make install` build
// the init program first and set this (-X) to its hash when they link
// this binary; both are built with the same flags (-trimpath, no cgo),
// so the same source gives the same bytes and a second build relinks
// nothing. A binary built without it (go install, go build) always
// re-executes itself.
var initProgramHash string

// initProgram is what the stages of this process's runs execute
// (package internal/initprog finds and checks it).
type initProgram = initprog.Program

// stageProgram is decided once per process: the file is opened, checked
// and kept open, and every stage is executed from that open file, so what
// was checked is what runs. Tests swap it (init_program_linux_test.go).
var stageProgram = sync.OnceValue(func() *initProgram {
	exe, err := os.Executable()
	if err == nil {
		exe, err = filepath.EvalSymlinks(exe)
	}
	if err != nil {
		return &initProgram{Path: "/proc/self/exe", Why: fmt.Sprintf("cannot locate this binary: %v", err)}
	}
	return initprog.Find(filepath.Dir(exe), initProgramHash)
})

// stageCommand returns the command that runs stage (a hidden first
// argument) with args: in the small init program when this process has
// one, else in this binary again.
func stageCommand(stage string, args ...string) *exec.Cmd {
	return exec.Command(stageProgram().Path, append([]string{stage}, args...)...)
}

// initProgramMechanism is what a stage reports about the program it runs
// in, read from the kernel (/proc/self/exe), not from what the caller
// meant to start.
func initProgramMechanism() Mechanism {
	exe, err := os.Readlink("/proc/self/exe")
	if err != nil {
		return Mechanism{"init-program", StateFailed, fmt.Sprintf("cannot read /proc/self/exe: %v", err)}
	}
	if filepath.Base(exe) == InitProgramName {
		return Mechanism{"init-program", StateApplied, InitProgramName + ": the small init program runs the sandbox's stages (" + exe + ")"}
	}
	return Mechanism{"init-program", StateUnavailable, "the whole binary re-executes itself for each stage (" + exe + "): no init program of its build next to it; `sandbox doctor` says why"}
}

// initProgramSummary says what this process's sandbox stages run in, for
// `sandbox doctor`: the small init program, or why this binary
// re-executes itself instead.
func initProgramSummary() string {
	p := stageProgram()
	if p.Small {
		return p.File.Name() + " (the small init program of this build)"
	}
	return "this binary re-executes itself for each stage: " + p.Why
}

// exeDir is the directory of the running binary, symlinks resolved, or ""
// when it cannot be found. PID 1 asks it before its root changes
// (initMain): there the binary is the init program (or this binary
// re-executed), so it names the same directory as the caller's.
var exeDir = sync.OnceValue(func() string {
	exe, err := os.Executable()
	if err == nil {
		exe, err = filepath.EvalSymlinks(exe)
	}
	if err != nil {
		return ""
	}
	return filepath.Dir(exe)
})

// binaryDirs are the directories of the binaries the sandbox's stages
// run: this binary's and the small init program's (the same directory
// after `make build`). A command that could write there would swap the
// init program, or the binary the stages re-execute, and the next run's
// stages would run its code outside every sandbox; so where a writable
// root holds one, it stays read-only inside (protectedBinaryDirs).
func binaryDirs() []string {
	var dirs []string
	if d := exeDir(); d != "" {
		dirs = append(dirs, d)
	}
	if p := stageProgram(); p.Small && p.Dir != "" && !contains(dirs, p.Dir) {
		dirs = append(dirs, p.Dir)
	}
	return dirs
}

// protectedBinaryDirs are those of dirs that lie inside a writable root
// (a workspace holding the build's bin/). As with the protected
// directories, one named exactly as a writable root (--write bin) stays
// writable: the caller asked for it.
func protectedBinaryDirs(dirs, writable []string) []string {
	var out []string
	for _, d := range dirs {
		if inAny(d, writable) && !contains(writable, d) && !contains(out, d) {
			out = append(out, d)
		}
	}
	return out
}
