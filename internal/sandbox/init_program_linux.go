package sandbox

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"

	"golang.org/x/sys/unix"
)

// InitProgramName is the small init program (cmd/ioh-sandbox-init) that
// runs the re-executed sandbox stages (PID 1, the exec stage, the landlock
// runner, the spawn stage) instead of the whole binary: `make build` puts
// it next to bin/ioh-lsp. A stage of the whole binary maps and
// initializes ten times the code; the small one starts about as fast as
// a minimal Go program.
const InitProgramName = "ioh-sandbox-init"

// initProgramHash ties this binary to the init program built with it:
// the SHA-256 (hex) of its content. `make build` and `make install` build
// the init program first and set this (-X) to its hash when they link
// this binary; both are built with the same flags (-trimpath, no cgo),
// so the same source gives the same bytes and a second build relinks
// nothing. A binary built without it (go install, go build) always
// re-executes itself.
var initProgramHash string

// maxInitProgram bounds what is read to hash a candidate init program
// (the real one is about 5 MB).
const maxInitProgram = 64 << 20

// initProgram is what the stages of this process's runs execute.
type initProgram struct {
	path  string   // what to exec: /proc/self/fd/N of the checked file, or /proc/self/exe
	small bool     // the small init program, not this binary
	file  *os.File // the checked init program, kept open for the process's life
	why   string   // why this binary re-executes itself, when it does
	dir   string   // the directory the small init program was found in
}

// stageProgram is decided once per process: the file is opened, checked
// and kept open, and every stage is executed from that open file, so what
// was checked is what runs. Tests swap it (init_program_linux_test.go).
var stageProgram = sync.OnceValue(func() *initProgram {
	exe, err := os.Executable()
	if err == nil {
		exe, err = filepath.EvalSymlinks(exe)
	}
	if err != nil {
		return &initProgram{path: "/proc/self/exe", why: fmt.Sprintf("cannot locate this binary: %v", err)}
	}
	return findInitProgram(filepath.Dir(exe), initProgramHash)
})

// findInitProgram opens dir's init program and checks it: its content's
// SHA-256 is hash, a regular file that only root or this user can
// change, in directories only they can change. Anything else, missing
// included, means this binary re-executes itself, and why says so.
func findInitProgram(dir, hash string) *initProgram {
	self := &initProgram{path: "/proc/self/exe"}
	if hash == "" {
		self.why = "this binary was built without `make build`, so it has no init program of its own build"
		return self
	}
	f, err := openInitProgram(filepath.Join(dir, InitProgramName), hash)
	if err != nil {
		self.why = err.Error()
		return self
	}
	return &initProgram{path: "/proc/self/fd/" + strconv.Itoa(int(f.Fd())), small: true, file: f, dir: dir}
}

// openInitProgram opens path and returns it only if it may be executed as
// the sandbox's init program. The descriptor is moved above the ones a
// child's ExtraFiles take (3, 4, …), so a stage's exec of
// /proc/self/fd/N still finds it after they are placed.
func openInitProgram(path, hash string) (*os.File, error) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC|unix.O_NOFOLLOW|unix.O_NONBLOCK, 0)
	if err != nil {
		return nil, fmt.Errorf("init program %s: %w", path, err)
	}
	high, err := unix.FcntlInt(uintptr(fd), unix.F_DUPFD_CLOEXEC, 100)
	unix.Close(fd)
	if err != nil {
		return nil, fmt.Errorf("init program %s: %w", path, err)
	}
	f := os.NewFile(uintptr(high), path)
	if err := checkInitProgram(f, path, hash); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// checkInitProgram checks the open file f (named path): what it finds is
// what the stages will execute.
func checkInitProgram(f *os.File, path, hash string) error {
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil {
		return fmt.Errorf("init program %s: %w", path, err)
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		return fmt.Errorf("init program %s is not a regular file", path)
	}
	if err := trustedOwner(path, st.Uid, st.Mode, false); err != nil {
		return err
	}
	if st.Mode&0o111 == 0 {
		return fmt.Errorf("init program %s is not executable", path)
	}
	for d := filepath.Dir(path); ; d = filepath.Dir(d) {
		var ds unix.Stat_t
		if err := unix.Stat(d, &ds); err != nil {
			return fmt.Errorf("init program directory %s: %w", d, err)
		}
		if err := trustedOwner(d, ds.Uid, ds.Mode, true); err != nil {
			return err
		}
		if d == "/" {
			break
		}
	}
	if st.Size > maxInitProgram {
		return fmt.Errorf("init program %s is from another build than this binary: %d bytes, not a program of this build (rebuild both with `make build`)", path, st.Size)
	}
	h := sha256.New()
	if _, err := io.Copy(h, io.NewSectionReader(f, 0, st.Size)); err != nil {
		return fmt.Errorf("init program %s: %w", path, err)
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != hash {
		return fmt.Errorf("init program %s is from another build than this binary: its SHA-256 is %.12s…, this binary's is %.12s… (rebuild both with `make build`)", path, got, hash)
	}
	return nil
}

// trustedOwner refuses a file or directory that someone other than root
// or this user could change: owned by another user, or writable by group
// or others (a directory with the sticky bit, like /tmp, keeps others
// from replacing what they do not own).
func trustedOwner(path string, uid, mode uint32, dir bool) error {
	if uid != 0 && int(uid) != os.Geteuid() {
		return fmt.Errorf("init program path %s is owned by uid %d, neither root nor this user", path, uid)
	}
	if mode&0o022 != 0 && !(dir && mode&unix.S_ISVTX != 0) {
		return fmt.Errorf("init program path %s is writable by group or others (mode %#o)", path, mode&0o7777)
	}
	return nil
}

// stageCommand returns the command that runs stage (a hidden first
// argument) with args: in the small init program when this process has
// one, else in this binary again.
func stageCommand(stage string, args ...string) *exec.Cmd {
	return exec.Command(stageProgram().path, append([]string{stage}, args...)...)
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
	if p.small {
		return p.file.Name() + " (the small init program of this build)"
	}
	return "this binary re-executes itself for each stage: " + p.why
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
	if p := stageProgram(); p.small && p.dir != "" && !contains(dirs, p.dir) {
		dirs = append(dirs, p.dir)
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
