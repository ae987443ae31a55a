//go:build unix

package sandbox

import (
	"maps"
	"os"
	"strings"
	"sync"
	"time"
)

// staticRoots caches the part of the linux tier's read view that does not
// change per run: the system directories, the toolchains found from the
// environment (PATH walks, /etc/passwd, home listings, symlink
// resolution: about 0.5 ms) and Spec.Readable, resolved. Reused for
// viewCacheTTL for the same environment and extra readable paths, as the
// landlock tier's view is (landlockView). A root replaced since is bound
// as it was resolved, or skipped if gone; a secret is never in the view
// because of this cache, since the linux tier masks secrets on every run.
var staticRoots struct {
	mu         sync.Mutex
	key        string
	at         time.Time
	roots      []string
	links      map[string]string
	toolchains []string // toolchainDirs, whose credential files are masked
}

// viewEnvKey is what the static part of a view depends on besides the
// file tree: the run's environment and extra readable paths, and this
// process's environment that toolchainDirs and homeDirs read.
func viewEnvKey(s *Spec) string {
	return strings.Join([]string{strings.Join(s.Env, "\x00"), strings.Join(s.Readable, "\x00"),
		os.Getenv("HOME"), os.Getenv("PATH"), os.Getenv("XDG_CONFIG_HOME"), os.Getenv("XDG_STATE_HOME"), os.Getenv("IOH_STATE_DIR"),
		os.Getenv("GOROOT"), os.Getenv("GOPATH"), os.Getenv("GOMODCACHE"), os.Getenv("GOCACHE"), os.Getenv("XDG_CACHE_HOME"),
		os.Getenv("CARGO_HOME"), os.Getenv("RUSTUP_HOME"), os.Getenv("NODE_PATH"),
		os.Getenv("VIRTUAL_ENV"), os.Getenv("CONDA_PREFIX"), os.Getenv("PYENV_ROOT")}, "\x01")
}

// linuxViewRoots is readViewRoots with its static part cached: only the
// working directory, the writable roots and the stage are resolved per
// run. It also returns the credential files inside the view's toolchain
// directories (toolchainSecrets), which the linux tier masks.
func linuxViewRoots(s *Spec) ([]string, map[string]string, []string) {
	key := viewEnvKey(s)
	staticRoots.mu.Lock()
	if staticRoots.key != key || time.Since(staticRoots.at) > viewCacheTTL {
		staticRoots.roots, staticRoots.links = readViewRoots(&Spec{Env: s.Env, Readable: s.Readable})
		staticRoots.toolchains = toolchainDirs(s.Env)
		staticRoots.key, staticRoots.at = key, time.Now()
	}
	roots := append([]string{}, staticRoots.roots...)
	links := maps.Clone(staticRoots.links)
	toolchains := staticRoots.toolchains
	staticRoots.mu.Unlock()
	secrets := toolchainSecrets(toolchains) // readview_toolchains.go: looked at per run
	dyn := append([]string{s.Dir}, s.Writable...)
	if s.Stage != nil {
		dyn = append(dyn, s.Stage.lower)
	}
	dynRoots, dynLinks := resolveRoots(dyn)
	maps.Copy(links, dynLinks)
	return minimalCover(append(roots, dynRoots...)), links, secrets
}
