// Package ruleset builds and enforces Landlock rulesets with raw calls:
// an empty ruleset handling what an ABI can (New), path rules added one
// descriptor at a time and the descriptors closed together (Builder),
// the rights the sandbox grants (Read, WriteOnly, File) cut to the ABI
// (HandledFS), and the thread restricted to it (Enforce, RestrictSelf).
// Which paths get which rights is internal/sandbox's.
package ruleset

import (
	"errors"
	"fmt"
	"sort"

	llsys "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// The landlock tier's ruleset holds one rule per path of the read view
// (about 170 on a machine whose /etc is carved around its secrets) and of
// the writable roots. It is built with raw calls, two per path: one
// open(O_PATH) and one landlock_add_rule; the descriptors are closed
// together at the end (close_range over each run of consecutive numbers,
// all of them this builder's). The caller says which view entries are
// directories (Add's Kind; the sandbox has them from its view), so the
// runner does not stat each path; what decides is still the kernel,
// looking at the very descriptor the rule is made from: directory rights
// on anything but a directory are refused (EINVAL), and the builder then
// checks that descriptor and grants the file rights alone, never more. A
// directory the caller took for a file gets the file rights alone (read
// and execute the files beneath it, no listing): narrower, never broader.

// Access rights of the tier's rules (go-landlock's RODirs, ROFiles,
// RWDirs with refer, RWFiles, and the devices' ioctl), each cut to what
// the kernel's ABI handles.
const (
	Read      = llsys.AccessFSExecute | llsys.AccessFSReadFile | llsys.AccessFSReadDir
	WriteOnly = llsys.AccessFSWriteFile | llsys.AccessFSRemoveDir | llsys.AccessFSRemoveFile |
		llsys.AccessFSMakeChar | llsys.AccessFSMakeDir | llsys.AccessFSMakeReg | llsys.AccessFSMakeSock |
		llsys.AccessFSMakeFifo | llsys.AccessFSMakeBlock | llsys.AccessFSMakeSym | llsys.AccessFSTruncate
	// File are the rights the kernel accepts on a rule for a
	// non-directory.
	File = llsys.AccessFSExecute | llsys.AccessFSWriteFile | llsys.AccessFSTruncate |
		llsys.AccessFSReadFile | llsys.AccessFSIoctlDev
)

// HandledFS is the filesystem rights an ABI handles (go-landlock's
// table: 13 rights in ABI 1, refer from 2, truncate from 3, ioctl on
// devices from 5, pathname unix sockets from 9).
func HandledFS(abi int) uint64 {
	switch {
	case abi >= 9:
		return 1<<17 - 1
	case abi >= 5:
		return 1<<16 - 1
	case abi >= 3:
		return 1<<15 - 1
	case abi >= 2:
		return 1<<14 - 1
	case abi >= 1:
		return 1<<13 - 1
	}
	return 0
}

// Kind says how a rule's path is taken: as a directory, as a file,
// or as whatever fstat finds on its descriptor.
type Kind byte

const (
	KindDir Kind = iota
	KindFile
	KindProbe
)

// Builder adds path rules to a ruleset, holding the O_PATH
// descriptors until close.
type Builder struct {
	FD      int    // the ruleset
	Handled uint64 // the filesystem rights it handles (HandledFS)
	held    []int
}

// add grants rights (cut to the handled ones; the file rights alone
// where the path is not a directory) beneath path. A missing path is
// skipped, as go-landlock's IgnoreIfMissing does.
func (b *Builder) Add(path string, rights uint64, kind Kind) error {
	pfd, err := b.Open(path)
	if errors.Is(err, unix.ENOENT) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("landlock rule for %s: open: %w", path, err)
	}
	if kind == KindProbe {
		kind = KindFile
		var st unix.Stat_t
		if err := unix.Fstat(pfd, &st); err != nil {
			return fmt.Errorf("landlock rule for %s: %w", path, err)
		}
		if st.Mode&unix.S_IFMT == unix.S_IFDIR {
			kind = KindDir
		}
	}
	want := rights & b.Handled
	if kind == KindFile {
		want &= File
	}
	if want == 0 {
		return nil
	}
	err = AddPath(b.FD, pfd, want)
	if errors.Is(err, unix.EINVAL) && kind == KindDir && want&^File != 0 {
		// Directory rights on something that is not a directory (the
		// caller's view is older than this path's current kind): look at
		// this descriptor, and give a non-directory its file rights only.
		var st unix.Stat_t
		if serr := unix.Fstat(pfd, &st); serr == nil && st.Mode&unix.S_IFMT != unix.S_IFDIR {
			err = nil
			if want &= File; want != 0 {
				err = AddPath(b.FD, pfd, want)
			}
		}
	}
	if err != nil {
		return fmt.Errorf("landlock rule for %s: landlock_add_rule: %w", path, err)
	}
	return nil
}

// AddPath adds a rule granting rights beneath the file pfd holds.
func AddPath(ruleset, pfd int, rights uint64) error {
	return llsys.LandlockAddPathBeneathRule(ruleset, &llsys.PathBeneathAttr{ParentFd: pfd, AllowedAccess: rights}, 0)
}

// open opens path as O_PATH and holds the descriptor; when the process
// is out of descriptors (a small open-files cap is already set in the
// exec stage) it closes those it holds and tries once more.
func (b *Builder) Open(path string) (int, error) {
	for retried := false; ; retried = true {
		fd, err := unix.Open(path, unix.O_PATH|unix.O_CLOEXEC, 0)
		if err == nil {
			b.held = append(b.held, fd)
			return fd, nil
		}
		if !errors.Is(err, unix.EMFILE) || retried || len(b.held) == 0 {
			return -1, err
		}
		b.Close()
	}
}

// closeHeld closes every descriptor held: one close_range per run of
// consecutive numbers. Every number in such a run is a descriptor this
// builder opened and still holds (descriptor numbers are unique), so
// nothing another thread opened meanwhile is touched.
func (b *Builder) Close() {
	fds := b.held
	b.held = b.held[:0]
	sort.Ints(fds)
	for i := 0; i < len(fds); {
		j := i
		for j+1 < len(fds) && fds[j+1] == fds[j]+1 {
			j++
		}
		if err := unix.CloseRange(uint(fds[i]), uint(fds[j]), 0); err != nil {
			for _, fd := range fds[i : j+1] {
				_ = unix.Close(fd)
			}
		}
		i = j + 1
	}
}

// New creates an empty ruleset handling what the ABI can of
// the tier's rights: every filesystem right, TCP bind and connect without
// network, the signal and abstract-socket scopes.
func New(abi int, network bool) (int, error) {
	attr := llsys.RulesetAttr{HandledAccessFS: HandledFS(abi)}
	if !network && abi >= 4 {
		attr.HandledAccessNet = llsys.AccessNetBindTCP | llsys.AccessNetConnectTCP
	}
	if abi >= 6 {
		attr.Scoped = llsys.ScopeAbstractUnixSocket | llsys.ScopeSignal
	}
	fd, err := llsys.LandlockCreateRuleset(&attr, 0)
	if err != nil {
		return -1, fmt.Errorf("landlock_create_ruleset: %w", err)
	}
	return fd, nil
}

// Enforce sets no_new_privs on the calling thread and restricts it
// (alone: the caller holds it locked and never unlocks it) to the ruleset.
func Enforce(fd int) error {
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("no_new_privs: %w", err)
	}
	return RestrictSelf(fd)
}

// RestrictSelf restricts the calling thread, which has no_new_privs set
// already, to the ruleset.
func RestrictSelf(fd int) error {
	if err := llsys.LandlockRestrictSelf(fd, 0); err != nil {
		return fmt.Errorf("landlock_restrict_self: %w", err)
	}
	return nil
}
