// Package policy is the product's sandbox policy: what a contained run
// may read of the host, what stays hidden inside that and what stays
// read-only in its writable roots. Default builds it as a sandbox.View,
// which the mechanism (internal/sandbox) applies as is and never widens.
// The mechanism does not import this package; a caller that builds a
// sandbox.Spec builds its view here (docs/sandbox-tiers.md#the-read-view).
package policy

import (
	"os"
	"os/user"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"

	"github.com/ioh-lsp/ioh-lsp/internal/sandbox/internal/view"
)

// Options are a run's inputs to the policy.
type Options struct {
	// Env is the run's extra environment (Spec.Env): its PATH, GOROOT,
	// GOPATH … are taken before this process's to find the toolchains.
	Env []string
	// Readable paths join the view (the configuration's
	// sandbox.readable). Absolute.
	Readable []string
	// Masked paths are hidden in addition to DefaultMasked (the
	// configuration's sandbox.masked). Absolute.
	Masked []string
	// Cache, when set, keeps the expansions of the masks and the walk of
	// /etc between the views of a long-lived caller, each reused only
	// while what it was read from is unchanged; nil computes everything
	// afresh.
	Cache *Cache
}

// Cache is what Default may reuse between views: the expansions of
// DefaultMasked over the homes and of /etc's secrets and the state
// directories, the walk of /etc, and the credential files of the
// toolchain directories, each with the modification times of what it
// was read from. Safe for concurrent use; the zero Cache is empty.
type Cache struct {
	home       homeMasks
	fixed      fixedMasks
	etc        etcScan
	toolchains toolchainSecretsCacheT
}

// NewCache returns an empty cache.
func NewCache() *Cache { return &Cache{} }

// Default is the product's view of a run: the system directories (/etc
// without its secrets), the toolchains and their caches, the directories
// on PATH and Options.Readable; masked, the secrets of DefaultMasked in
// every home, this program's state and config directories, /etc's named
// secrets and whatever others may not read there, the credential files
// of the toolchain directories, and Options.Masked (each that exists, and
// its symlink's target); protected in every writable root, the
// directories the host runs code from later (protectedNames). The
// expansions are reused while the directories they were read from are
// unchanged, so a secret created since is masked on the next call.
func Default(o Options) view.View {
	c := o.Cache
	if c == nil {
		c = &Cache{} // the cold path: nothing kept
	}
	tc := toolchainDirs(o.Env)
	read := append(append(append([]string{}, systemReadView()...), tc...), o.Readable...)
	masked := view.Merge(c.maskTargets(o.Masked), c.fixedMaskTargets())
	masked = view.Merge(masked, c.toolchainSecrets(tc))
	return view.View{Read: read, Masked: masked, ProtectedNames: slices.Clone(protectedNames)}
}

// linuxReadView are the system directories every Linux view holds
// (missing ones are skipped).
var linuxReadView = []string{
	"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc",
	"/proc", "/sys/devices/system/cpu", "/sys/fs/cgroup",
}

// macReadView are the macOS system directories every read view holds:
// the system itself (its libraries and the dyld shared cache live under
// /System), the command-line tools and Xcode, /etc (/private/etc, its
// secrets denied), the time zones, the developer-directory link, and
// /opt (Homebrew on Apple silicon, MacPorts). Not /Library as a whole:
// it holds the system keychains and other users' preferences.
var macReadView = []string{
	"/usr", "/bin", "/sbin", "/System", "/opt",
	"/Library/Developer", "/Library/Frameworks", "/Library/Apple", "/Applications/Xcode.app",
	"/private/etc", "/private/var/db/timezone", "/private/var/select",
}

func systemReadView() []string {
	if runtime.GOOS == "darwin" {
		return macReadView
	}
	return linuxReadView
}

// etcSecrets are files under /etc no view holds even where others may
// read them (beyond DefaultMasked); whatever others may not read in /etc
// is left out too, found by a walk (etcUnreadable, etc.go).
var etcSecrets = []string{
	"/etc/shadow", "/etc/shadow-", "/etc/gshadow", "/etc/gshadow-", "/etc/ssh",
	"/etc/sudoers", "/etc/sudoers.d", "/etc/ssl/private", "/etc/security/opasswd",
	"/etc/.pwd.lock", "/etc/subuid-", "/etc/subgid-",
}

// protectedNames stay read-only inside every writable root: the names
// the mechanism protects in every run anyway (view.HostRunNames), listed
// in the view too so that it says what it holds.
var protectedNames = view.HostRunNames

// homeDirs are the machine's home directories: the user's, root's and
// every /home/*.
func homeDirs() []string {
	set := map[string]bool{"/root": true}
	if h, err := os.UserHomeDir(); err == nil {
		set[h] = true
	}
	if u, err := user.Current(); err == nil && u.HomeDir != "" {
		set[u.HomeDir] = true
	}
	if ents, err := os.ReadDir("/home"); err == nil {
		for _, e := range ents {
			set[filepath.Join("/home", e.Name())] = true
		}
	}
	var out []string
	for h := range set {
		out = append(out, filepath.Clean(h))
	}
	sort.Strings(out)
	return out
}

// ownStateDirs are this program's state and config directories (trace
// databases holding conversations, the user config): never readable.
func ownStateDirs() []string {
	var out []string
	if v := os.Getenv("IOH_STATE_DIR"); v != "" {
		out = append(out, v)
	}
	if v := os.Getenv("XDG_STATE_HOME"); v != "" {
		out = append(out, filepath.Join(v, "ioh"))
	}
	if v := os.Getenv("XDG_CONFIG_HOME"); v != "" {
		out = append(out, filepath.Join(v, "ioh"))
	}
	for _, h := range homeDirs() {
		out = append(out, filepath.Join(h, ".local/state/ioh"), filepath.Join(h, ".config/ioh"))
	}
	var abs []string
	for _, p := range out {
		if filepath.IsAbs(p) {
			abs = append(abs, filepath.Clean(p))
		}
	}
	return abs
}

// lookPathIn finds an executable name on pathVar.
func lookPathIn(name, pathVar string) (string, error) {
	for _, dir := range filepath.SplitList(pathVar) {
		if dir == "" || strings.Contains(name, "/") {
			continue
		}
		p := filepath.Join(dir, name)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", os.ErrNotExist
}
