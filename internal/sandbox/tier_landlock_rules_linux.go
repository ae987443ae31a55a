package sandbox

import (
	"github.com/ioh-lsp/ioh-lsp/internal/sandbox/internal/ruleset"

	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	llsys "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"

	"github.com/ioh-lsp/ioh-lsp/internal/sandbox/internal/view"
)

// Entry types in initConfig.ReadViewTypes, one byte per ReadView entry.
const (
	viewDir  = 'd' // a directory, as the caller saw it
	viewFile = 'f' // anything else
)

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
		b := &ruleset.Builder{FD: pr.fd, Handled: ruleset.HandledFS(abi)}
		err := addWritable(b, cfg)
		b.Close()
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
		if fd, err = ruleset.New(abi, cfg.Network); err != nil {
			return -1, nil, err
		}
		b := &ruleset.Builder{FD: fd, Handled: ruleset.HandledFS(abi)}
		err = addTier(b, cfg, types)
		b.Close()
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

// addTier adds the devices, the read view and the writable roots.
func addTier(b *ruleset.Builder, cfg *initConfig, types string) error {
	if err := addView(b, cfg.ReadView, types); err != nil {
		return err
	}
	return addWritable(b, cfg)
}

// addView adds the devices and the read view (types as in ReadViewTypes;
// "": the builder looks at each entry).
func addView(b *ruleset.Builder, view []string, types string) error {
	for _, p := range sandboxDevices {
		if err := b.Add(p, ruleset.Read|ruleset.WriteOnly|llsys.AccessFSIoctlDev, ruleset.KindFile); err != nil {
			return err
		}
	}
	for i, p := range view {
		kind := ruleset.KindProbe
		if types != "" {
			switch types[i] {
			case viewDir:
				kind = ruleset.KindDir
			case viewFile:
				kind = ruleset.KindFile
			default:
				return fmt.Errorf("landlock: view entry %s has unknown type %q", p, types[i])
			}
		}
		if err := b.Add(p, ruleset.Read, kind); err != nil {
			return err
		}
	}
	return nil
}

// addWritable adds the writable roots.
func addWritable(b *ruleset.Builder, cfg *initConfig) error {
	for _, p := range cfg.Writable {
		if err := b.Add(p, ruleset.Read|ruleset.WriteOnly|llsys.AccessFSRefer, ruleset.KindProbe); err != nil {
			return err
		}
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
		if view.IsSymlink(p) {
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
			r = view.Resolved(d)
			k.deny[d] = r
		}
		for _, q := range []string{filepath.Clean(d), r} {
			if q != "" && filepath.IsAbs(q) && (view.Under(target, q) || view.Under(q, target)) {
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

// expire empties k once its entries are viewCacheTTL old. The caller
// holds k.mu.
func (k *viewKindCache) expire() {
	if k.m == nil || time.Since(k.at) > viewCacheTTL {
		k.m, k.at = map[string]viewEntry{}, time.Now()
		k.deny = map[string]string{}
	}
}
