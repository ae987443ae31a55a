package sandbox

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"

	"golang.org/x/sys/unix"
)

// A landlock-tier run gets a private directory (its HOME and TMPDIR, and
// a staged view's copy) under the temporary directory, made before the
// run and removed after it. On a disk filesystem the three mkdirs and the
// three rmdirs are journal updates costing about 0.3 and 0.6 ms, more than
// any other step of the caller's. A long-lived caller's Pool has the
// next run's directory made ahead, as its stage is, and a finished run's
// removed in the background; a one-shot caller does both in line.

// spareDir is the private directory a pool made ahead for the next run.
type spareDir struct {
	sync.Mutex
	dir    string // resolved; "" when none is ready
	parent string // the temporary directory it was made in
	making bool
}

// takePrivateDir returns a fresh private directory for a run, resolved,
// with empty home and tmp directories in it: p's spare one when it is
// still intact and in the current temporary directory, else a new one.
func (p *Pool) takePrivateDir() (string, error) {
	var d, parent string
	if p != nil {
		sd := &p.os.dir
		sd.Lock()
		d, parent = sd.dir, sd.parent
		sd.dir = ""
		sd.Unlock()
	}
	if d != "" {
		if parent == os.TempDir() && privateDirIntact(d) {
			return d, nil
		}
		// Not removePrivate: through a directory swapped for a link its
		// rmdirs would reach the link's target. RemoveAll follows none.
		_ = os.RemoveAll(d)
	}
	return makePrivateDir()
}

// privateDirPrefix starts a private directory's name. A neutral one, as
// mktemp(1) makes: HOME and TMPDIR lie below it, and a name that says
// "sandbox" would let code under test behave differently inside.
const privateDirPrefix = "tmp."

// makePrivateDir makes a private directory: mode 0700, a random name
// under the temporary directory, home and tmp inside.
func makePrivateDir() (string, error) {
	tmp, err := os.MkdirTemp("", privateDirPrefix)
	if err != nil {
		return "", fmt.Errorf("private directory: %w", err)
	}
	real, err := filepath.EvalSymlinks(tmp)
	if err != nil {
		_ = os.RemoveAll(tmp)
		return "", fmt.Errorf("private directory: %w", err)
	}
	for _, sub := range []string{"home", "tmp"} {
		if err := os.Mkdir(filepath.Join(real, sub), 0o700); err != nil {
			_ = os.RemoveAll(real)
			return "", fmt.Errorf("private directory: %w", err)
		}
	}
	return real, nil
}

// privateDirIntact checks a directory made ahead before a run takes it:
// it and its home and tmp are still directories (not symlinks) of this
// user with mode 0700, and hold nothing but home and tmp, both empty. A
// run whose writable roots include the temporary directory itself could
// otherwise have swapped one for a link, and the next run's rules would
// land on its target, or have left files there (a ~/.bashrc, a
// ~/.gitconfig, a planted tool) for the next run, another task's, to
// read and run.
func privateDirIntact(d string) bool {
	for _, p := range []string{d, filepath.Join(d, "home"), filepath.Join(d, "tmp")} {
		var st unix.Stat_t
		if err := unix.Lstat(p, &st); err != nil {
			return false
		}
		if st.Mode&unix.S_IFMT != unix.S_IFDIR || st.Mode&0o7777 != 0o700 || int(st.Uid) != os.Geteuid() {
			return false
		}
	}
	return holdsOnly(d, "home", "tmp") && holdsOnly(filepath.Join(d, "home")) && holdsOnly(filepath.Join(d, "tmp"))
}

// holdsOnly reports whether the directory dir holds exactly names.
func holdsOnly(dir string, names ...string) bool {
	f, err := os.Open(dir)
	if err != nil {
		return false
	}
	defer f.Close()
	got, err := f.Readdirnames(len(names) + 1)
	if err != nil && !(errors.Is(err, io.EOF) && len(names) == 0) {
		return false
	}
	if len(got) != len(names) {
		return false
	}
	for _, n := range got {
		if !contains(names, n) {
			return false
		}
	}
	return true
}

// releasePrivateDir removes a run's private directory: in the background
// for a long-lived caller's pool, which then has the next one made ahead;
// in line on the cold path.
func (p *Pool) releasePrivateDir(d string) {
	if !p.background(func() { removePrivate(d); p.makeSpareDir() }) {
		removePrivate(d)
	}
}

// makeSpareDir makes p's next run's private directory, unless one is
// ready or being made, or p is closed.
func (p *Pool) makeSpareDir() {
	sd := &p.os.dir
	sd.Lock()
	if sd.dir != "" || sd.making || !p.active() {
		sd.Unlock()
		return
	}
	sd.making = true
	sd.Unlock()
	parent := os.TempDir()
	d, err := makePrivateDir()
	sd.Lock()
	sd.making = false
	keep := err == nil && sd.dir == "" && p.active()
	if keep {
		sd.dir, sd.parent = d, parent
	}
	sd.Unlock()
	if err == nil && !keep {
		removePrivate(d)
	}
}

// drop removes the directory made ahead (Pool.Close).
func (sd *spareDir) drop() {
	sd.Lock()
	d := sd.dir
	sd.dir = ""
	sd.Unlock()
	if d != "" {
		_ = os.RemoveAll(d) // not removePrivate: it may have been swapped for a link (takePrivateDir)
	}
}

// removePrivate removes a run's private directory. Mostly the command
// left its HOME and TMPDIR empty, and three rmdirs do it instead of
// RemoveAll's walk (about 20 calls); else removeTree.
func removePrivate(dir string) {
	for _, p := range []string{filepath.Join(dir, "home"), filepath.Join(dir, "tmp"), dir} {
		if err := unix.Rmdir(p); err != nil && (p == dir || !errors.Is(err, unix.ENOENT)) {
			_ = removeTree(dir)
			return
		}
	}
}

// removeTree removes dir and everything in it, following no symlink, like
// os.RemoveAll; where that fails (a directory the command left without
// write or search permission for its owner, chmod 500, holding a file),
// it gives every directory of the tree its owner's rwx and tries again.
func removeTree(dir string) error {
	err := os.RemoveAll(dir)
	if err == nil {
		return nil
	}
	fd, oerr := unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if oerr != nil {
		return err
	}
	ownerRWX(fd, 0)
	unix.Close(fd)
	return os.RemoveAll(dir)
}

// maxTreeDepth bounds ownerRWX's descent (one descriptor per level).
const maxTreeDepth = 256

// ownerRWX adds u+rwx to the directory open (O_PATH) at fd and to every
// directory below it. Each is opened from its parent's descriptor with
// O_NOFOLLOW and O_DIRECTORY, so a symlink is never followed and nothing
// outside the tree is touched; the mode is changed through the
// descriptor's /proc/self/fd entry, which names that very inode.
func ownerRWX(fd, depth int) {
	var st unix.Stat_t
	if unix.Fstat(fd, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFDIR || int(st.Uid) != os.Geteuid() {
		return
	}
	self := fmt.Sprintf("/proc/self/fd/%d", fd)
	if st.Mode&0o700 != 0o700 {
		if unix.Chmod(self, (st.Mode&0o7777)|0o700) != nil {
			return
		}
	}
	if depth >= maxTreeDepth {
		return
	}
	rd, err := unix.Open(self, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return
	}
	f := os.NewFile(uintptr(rd), self)
	defer f.Close()
	names, _ := f.Readdirnames(-1)
	for _, name := range names {
		c, err := unix.Openat(rd, name, unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err != nil {
			continue // not a directory, or a symlink
		}
		ownerRWX(c, depth+1)
		unix.Close(c)
	}
}
