package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"time"

	llsys "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// The landlock tier's ruleset holds one rule per path of the read view
// (about 170 on a machine whose /etc is carved around its secrets) and of
// the writable roots. It is built with raw calls, two per path: one
// open(O_PATH) and one landlock_add_rule; the descriptors are closed
// together at the end (close_range over each run of consecutive numbers,
// all of them this builder's). The caller says which view entries are
// directories (initConfig.ReadViewTypes, from its cached view), so the
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
	llRead      = llsys.AccessFSExecute | llsys.AccessFSReadFile | llsys.AccessFSReadDir
	llWriteOnly = llsys.AccessFSWriteFile | llsys.AccessFSRemoveDir | llsys.AccessFSRemoveFile |
		llsys.AccessFSMakeChar | llsys.AccessFSMakeDir | llsys.AccessFSMakeReg | llsys.AccessFSMakeSock |
		llsys.AccessFSMakeFifo | llsys.AccessFSMakeBlock | llsys.AccessFSMakeSym | llsys.AccessFSTruncate
	// llFile are the rights the kernel accepts on a rule for a
	// non-directory.
	llFile = llsys.AccessFSExecute | llsys.AccessFSWriteFile | llsys.AccessFSTruncate |
		llsys.AccessFSReadFile | llsys.AccessFSIoctlDev
)

// Entry types in initConfig.ReadViewTypes, one byte per ReadView entry.
const (
	viewDir  = 'd' // a directory, as the caller saw it
	viewFile = 'f' // anything else
)

// llHandledFS is the filesystem rights an ABI handles (go-landlock's
// table: 13 rights in ABI 1, refer from 2, truncate from 3, ioctl on
// devices from 5, pathname unix sockets from 9).
func llHandledFS(abi int) uint64 {
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

// pathKind says how a rule's path is taken: as a directory, as a file,
// or as whatever fstat finds on its descriptor.
type pathKind byte

const (
	kindDir pathKind = iota
	kindFile
	kindProbe
)

// rulesetBuilder adds path rules to a ruleset, holding the O_PATH
// descriptors until close.
type rulesetBuilder struct {
	fd      int
	handled uint64
	held    []int
}

// add grants rights (cut to the handled ones; the file rights alone
// where the path is not a directory) beneath path. A missing path is
// skipped, as go-landlock's IgnoreIfMissing does.
func (b *rulesetBuilder) add(path string, rights uint64, kind pathKind) error {
	pfd, err := b.open(path)
	if errors.Is(err, unix.ENOENT) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("landlock rule for %s: open: %w", path, err)
	}
	if kind == kindProbe {
		kind = kindFile
		var st unix.Stat_t
		if err := unix.Fstat(pfd, &st); err != nil {
			return fmt.Errorf("landlock rule for %s: %w", path, err)
		}
		if st.Mode&unix.S_IFMT == unix.S_IFDIR {
			kind = kindDir
		}
	}
	want := rights & b.handled
	if kind == kindFile {
		want &= llFile
	}
	if want == 0 {
		return nil
	}
	err = landlockAddPath(b.fd, pfd, want)
	if errors.Is(err, unix.EINVAL) && kind == kindDir && want&^llFile != 0 {
		// Directory rights on something that is not a directory (the
		// caller's view is older than this path's current kind): look at
		// this descriptor, and give a non-directory its file rights only.
		var st unix.Stat_t
		if serr := unix.Fstat(pfd, &st); serr == nil && st.Mode&unix.S_IFMT != unix.S_IFDIR {
			err = nil
			if want &= llFile; want != 0 {
				err = landlockAddPath(b.fd, pfd, want)
			}
		}
	}
	if err != nil {
		return fmt.Errorf("landlock rule for %s: landlock_add_rule: %w", path, err)
	}
	return nil
}

// landlockAddPath adds a rule granting rights beneath the file pfd holds.
func landlockAddPath(ruleset, pfd int, rights uint64) error {
	return llsys.LandlockAddPathBeneathRule(ruleset, &llsys.PathBeneathAttr{ParentFd: pfd, AllowedAccess: rights}, 0)
}

// open opens path as O_PATH and holds the descriptor; when the process
// is out of descriptors (a small open-files cap is already set in the
// exec stage) it closes those it holds and tries once more.
func (b *rulesetBuilder) open(path string) (int, error) {
	for retried := false; ; retried = true {
		fd, err := unix.Open(path, unix.O_PATH|unix.O_CLOEXEC, 0)
		if err == nil {
			b.held = append(b.held, fd)
			return fd, nil
		}
		if !errors.Is(err, unix.EMFILE) || retried || len(b.held) == 0 {
			return -1, err
		}
		b.closeHeld()
	}
}

// closeHeld closes every descriptor held: one close_range per run of
// consecutive numbers. Every number in such a run is a descriptor this
// builder opened and still holds (descriptor numbers are unique), so
// nothing another thread opened meanwhile is touched.
func (b *rulesetBuilder) closeHeld() {
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

// tierRuleset builds the landlock tier's ruleset: reads only within the
// read view, writes only in the writable roots (which include the run's
// private temporary directory) and on a few devices, TCP bind and connect
// refused unless the network was asked for, signals and abstract unix
// sockets scoped to the sandbox. It returns the ruleset's descriptor,
// which the caller enforces (enforceRuleset) and closes, and the
// mechanisms it will report.
func tierRuleset(cfg *initConfig) (int, []Mechanism, error) {
	abi := landlockABI()
	if abi < 1 {
		return -1, nil, errors.New(landlockMissing()) // explain_linux.go
	}
	types := cfg.ReadViewTypes
	if types != "" && len(types) != len(cfg.ReadView) {
		return -1, nil, fmt.Errorf("landlock: %d view entry types for %d view entries", len(types), len(cfg.ReadView))
	}
	ahead := ""
	fd := -1
	if pr := claimPrebuilt(cfg); pr != nil { // tier_landlock_hint_linux.go
		// The writable roots go into the prebuilt ruleset; if its view's
		// paths do not all name the same files now, it is dropped whole.
		b := &rulesetBuilder{fd: pr.fd, handled: llHandledFS(abi)}
		err := b.addWritable(cfg)
		b.closeHeld()
		same := pr.unchanged() // tier_landlock_viewcheck_linux.go
		pr.closeWatch()
		switch {
		case !same:
			unix.Close(pr.fd)
		case err != nil:
			unix.Close(pr.fd)
			return -1, nil, err
		default:
			fd = pr.fd
			ahead = "; the view's rules were built before the run and checked against it"
		}
	}
	if fd < 0 {
		var err error
		if fd, err = newTierRuleset(abi, cfg.Network); err != nil {
			return -1, nil, err
		}
		b := &rulesetBuilder{fd: fd, handled: llHandledFS(abi)}
		err = b.addTier(cfg, types)
		b.closeHeld()
		if err != nil {
			unix.Close(fd)
			return -1, nil, err
		}
	}
	if port := cfg.NetProxyPort; port != 0 && !cfg.Network {
		// The ruleset handles TCP connect (newTierRuleset): this one
		// port is all it grants (tier_landlock_linux.go refused the run
		// below ABI 4).
		if err := llsys.LandlockAddNetPortRule(fd, &llsys.NetPortAttr{AllowedAccess: llsys.AccessNetConnectTCP, Port: uint64(port)}, 0); err != nil {
			unix.Close(fd)
			return -1, nil, fmt.Errorf("landlock: rule for the proxy's port %d: %w", port, err)
		}
	}
	ms := []Mechanism{{"landlock-fs", StateApplied,
		fmt.Sprintf("ABI %d: reads only the read view (%d paths), writes only %d roots and a private temporary directory%s; Landlock has no right for mode, owner, times or extended attributes: those calls go to the metadata supervisor", abi, len(cfg.ReadView), len(cfg.Writable), ahead)}}
	switch {
	case cfg.Network:
		ms = append(ms, Mechanism{"landlock-net", StateUnavailable, "network requested"})
	case cfg.NetProxyPort != 0:
		ms = append(ms, Mechanism{"landlock-net", StateApplied, fmt.Sprintf("TCP bind refused; TCP connect only to port %d, the proxy's on 127.0.0.1 (Landlock's rule names a port, not an address; on x86_64 the metadata supervisor checks the address)", cfg.NetProxyPort)})
	case abi >= 4:
		ms = append(ms, Mechanism{"landlock-net", StateApplied, "TCP bind and connect refused"})
	default:
		ms = append(ms, Mechanism{"landlock-net", StateUnavailable, fmt.Sprintf("ABI %d has no TCP rules (needs 4); seccomp refuses the sockets instead", abi)})
	}
	if abi >= 6 {
		ms = append(ms, Mechanism{"landlock-scope", StateApplied, "signals and abstract unix sockets stay inside the sandbox"})
	} else {
		ms = append(ms, Mechanism{"landlock-scope", StateUnavailable, fmt.Sprintf("ABI %d cannot scope signals or abstract unix sockets (needs 6)", abi)})
	}
	return fd, ms, nil
}

// newTierRuleset creates an empty ruleset handling what the ABI can of
// the tier's rights: every filesystem right, TCP bind and connect without
// network, the signal and abstract-socket scopes.
func newTierRuleset(abi int, network bool) (int, error) {
	attr := llsys.RulesetAttr{HandledAccessFS: llHandledFS(abi)}
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

// addTier adds the devices, the read view and the writable roots.
func (b *rulesetBuilder) addTier(cfg *initConfig, types string) error {
	if err := b.addView(cfg.ReadView, types); err != nil {
		return err
	}
	return b.addWritable(cfg)
}

// addView adds the devices and the read view (types as in ReadViewTypes;
// "": the builder looks at each entry).
func (b *rulesetBuilder) addView(view []string, types string) error {
	for _, p := range sandboxDevices {
		if err := b.add(p, llRead|llWriteOnly|llsys.AccessFSIoctlDev, kindFile); err != nil {
			return err
		}
	}
	for i, p := range view {
		kind := kindProbe
		if types != "" {
			switch types[i] {
			case viewDir:
				kind = kindDir
			case viewFile:
				kind = kindFile
			default:
				return fmt.Errorf("landlock: view entry %s has unknown type %q", p, types[i])
			}
		}
		if err := b.add(p, llRead, kind); err != nil {
			return err
		}
	}
	return nil
}

// addWritable adds the writable roots.
func (b *rulesetBuilder) addWritable(cfg *initConfig) error {
	for _, p := range cfg.Writable {
		if err := b.add(p, llRead|llWriteOnly|llsys.AccessFSRefer, kindProbe); err != nil {
			return err
		}
	}
	return nil
}

// enforceRuleset sets no_new_privs on the calling thread and restricts it
// (alone: the caller holds it locked and never unlocks it) to the ruleset.
func enforceRuleset(fd int) error {
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("no_new_privs: %w", err)
	}
	return restrictSelfTo(fd)
}

// restrictSelfTo restricts the calling thread, which has no_new_privs set
// already, to the ruleset.
func restrictSelfTo(fd int) error {
	if err := llsys.LandlockRestrictSelf(fd, 0); err != nil {
		return fmt.Errorf("landlock_restrict_self: %w", err)
	}
	return nil
}

// viewEntry is what the caller saw of a view path.
type viewEntry struct {
	kind byte // viewDir or viewFile, following symlinks as the runner's open does
	link bool // the path itself is a symlink
}

// lookViewEntry is p's entry, cached in k for viewCacheTTL as the view's
// own static part is; a path whose kind changed since is handled by the
// runner (see above). A missing path is not cached. The caller holds
// k.mu.
func (k *viewKindCache) lookViewEntry(p string) viewEntry {
	k.expire()
	if e, ok := k.m[p]; ok {
		return e
	}
	e := viewEntry{kind: viewFile}
	fi, err := os.Lstat(p)
	if err != nil {
		return e
	}
	if fi.Mode()&os.ModeSymlink != 0 {
		e.link = true
		if fi, err = os.Stat(p); err != nil {
			k.m[p] = e
			return e
		}
	}
	if fi.IsDir() {
		e.kind = viewDir
	}
	k.m[p] = e
	return e
}

// viewTypes is ReadViewTypes for a view: 'd' for each directory, 'f' for
// anything else.
func (k *viewKindCache) viewTypes(view []string) string {
	k.mu.Lock()
	defer k.mu.Unlock()
	out := make([]byte, len(view))
	for i, p := range view {
		out[i] = k.lookViewEntry(p).kind
	}
	return string(out)
}

// dropLinksToDenied drops the entries that are symlinks resolving to a
// denied path, below one, or above one, or not resolving at all. The
// runner's open follows an entry's symlink, so its rule lands on the
// target; carving (readview.go) compares names, and a link that is an
// entry of a carved directory (a home given as the workspace or a
// writable root, /etc) would otherwise grant the secret it points to.
// Sandboxed code cannot make such an entry: it holds no right on a
// carved directory itself, only on its entries. Whether an entry is a
// link is looked at now, never taken from k: a directory swapped for a
// link since (a writable root replaced by a link to a home) is judged as
// the link it is.
func (k *viewKindCache) dropLinksToDenied(entries, deny []string) []string {
	k.mu.Lock()
	defer k.mu.Unlock()
	var out []string
	for _, p := range entries {
		if isSymlink(p) {
			t, err := filepath.EvalSymlinks(p)
			if err != nil || k.linkDenied(t, deny) {
				continue
			}
		}
		out = append(out, p)
	}
	return out
}

// linkDenied reports whether target is a denied path (as named or as
// it resolves), lies below one, or holds one. The caller holds k.mu.
func (k *viewKindCache) linkDenied(target string, deny []string) bool {
	k.expire()
	for _, d := range deny {
		r, ok := k.deny[d]
		if !ok {
			r = resolved(d) // masks.go
			k.deny[d] = r
		}
		for _, q := range []string{filepath.Clean(d), r} {
			if q != "" && filepath.IsAbs(q) && (under(target, q) || under(q, target)) {
				return true
			}
		}
	}
	return false
}

// viewKindCache holds what was seen of view paths: a pool's, kept
// across its runs, or a run's own (orFresh).
type viewKindCache struct {
	mu   sync.Mutex
	at   time.Time
	m    map[string]viewEntry
	deny map[string]string // a denied path → its resolution
}

// orFresh is k, or for a nil k (the cold path) a cache that lives for
// one computation only.
func (k *viewKindCache) orFresh() *viewKindCache {
	if k == nil {
		return &viewKindCache{}
	}
	return k
}

// isSymlink reports whether p itself is a symlink now.
func isSymlink(p string) bool {
	fi, err := os.Lstat(p)
	return err == nil && fi.Mode()&os.ModeSymlink != 0
}

// expire empties k once its entries are viewCacheTTL old. The caller
// holds k.mu.
func (k *viewKindCache) expire() {
	if k.m == nil || time.Since(k.at) > viewCacheTTL {
		k.m, k.at = map[string]viewEntry{}, time.Now()
		k.deny = map[string]string{}
	}
}
