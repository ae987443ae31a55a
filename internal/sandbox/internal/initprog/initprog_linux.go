// Package initprog finds the sandbox's small init program
// (cmd/ioh-sandbox-init) next to the binary and checks it before any
// stage runs in it: a regular, executable file whose content hashes to
// the value the binary was linked with, which only root or the user can
// change, in directories only they can change. The file stays open and
// every stage is executed from that descriptor, so what was checked is
// what runs. Package internal/sandbox decides when to look and what a
// refusal means (the binary re-executes itself).
package initprog

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"

	"golang.org/x/sys/unix"
)

// Name is the small init program's file name: `make build` puts it next
// to bin/ioh-lsp.
const Name = "ioh-sandbox-init"

// maxSize bounds what is read to hash a candidate init program (the real
// one is about 5 MB).
const maxSize = 64 << 20

// Program is what the stages of a process's runs execute.
type Program struct {
	Path  string   // what to exec: /proc/self/fd/N of the checked file, or /proc/self/exe
	Small bool     // the small init program, not this binary
	File  *os.File // the checked init program, kept open for the process's life
	Why   string   // why this binary re-executes itself, when it does
	Dir   string   // the directory the small init program was found in
}

// Find opens dir's init program and checks it: its content's SHA-256 is
// hash, a regular file that only root or this user can change, in
// directories only they can change. Anything else, missing included,
// means this binary re-executes itself, and Why says so.
func Find(dir, hash string) *Program {
	self := &Program{Path: "/proc/self/exe"}
	if hash == "" {
		self.Why = "this binary was built without `make build`, so it has no init program of its own build"
		return self
	}
	f, err := open(filepath.Join(dir, Name), hash)
	if err != nil {
		self.Why = err.Error()
		return self
	}
	return &Program{Path: "/proc/self/fd/" + strconv.Itoa(int(f.Fd())), Small: true, File: f, Dir: dir}
}

// open opens path and returns it only if it may be executed as
// the sandbox's init program. The descriptor is moved above the ones a
// child's ExtraFiles take (3, 4, …), so a stage's exec of
// /proc/self/fd/N still finds it after they are placed.
func open(path, hash string) (*os.File, error) {
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
	if err := check(f, path, hash); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// check checks the open file f (named path): what it finds is
// what the stages will execute.
func check(f *os.File, path, hash string) error {
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
	if st.Size > maxSize {
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
