package policy

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
)

// Toolchain roots are never taken whole: a prefix holds configuration
// with credentials next to what a build reads (nvm's etc/npmrc, a
// virtualenv's pip.conf, conda's .condarc), and one unpacked into a home
// (node in ~/.local) would bring the home's other contents (~/.local/share
// with keyrings and shell history). The view takes these parts of each.
var (
	// goRootParts are what the go command reads of GOROOT.
	goRootParts = []string{"api", "bin", "go.env", "lib", "misc", "pkg", "src", "VERSION"}
	// nodeParts are what node and npm read of node's prefix (not etc,
	// where the global npmrc lives, nor share).
	nodeParts = []string{"bin", "include", "lib"}
	// pythonParts are what an interpreter reads of a Python prefix (a
	// virtualenv, a conda environment, a pyenv version): pyvenv.cfg makes
	// a virtualenv's interpreter find its packages.
	pythonParts = []string{"bin", "include", "lib", "lib64", "pyvenv.cfg"}
	// pyenvParts are pyenv's own programs and shims (its versions are
	// Python prefixes).
	pyenvParts = []string{"bin", "libexec", "plugins", "shims", "version"}
	// rustupParts are what rustup's proxies read.
	rustupParts = []string{"settings.toml", "toolchains"}
)

// toolchainCredentials are the names of credential and registry
// configuration files masked wherever they appear at the top of a
// toolchain directory of the view or in its etc directory (a PATH
// directory, a package directory, a part of a prefix).
var toolchainCredentials = []string{
	".condarc", ".git-credentials", ".netrc", ".npmrc", ".pypirc", ".yarnrc", ".yarnrc.yml",
	"auth.json", "condarc", "credentials", "credentials.json", "credentials.toml", "npmrc",
	"pip.conf", "pip.ini",
}

// toolchainDirs are the parts of the toolchains and caches a check needs
// to read: the Go root's parts and the module and build caches, cargo's
// registry, git checkouts and bin, rustup's toolchains, the parts of the
// prefix of the node on PATH and NODE_PATH, the parts of Python
// environments (VIRTUAL_ENV, CONDA_PREFIX, pyenv and its versions,
// ~/.local/lib/python3*), and every directory on the sandbox's PATH. No
// home, no home's direct child (but a PATH directory named bin, ~/bin)
// and not / is among them.
func toolchainDirs(extraEnv []string) []string {
	env := func(k string) string {
		v := ""
		for _, kv := range extraEnv {
			if x, ok := strings.CutPrefix(kv, k+"="); ok {
				v = x
			}
		}
		if v == "" {
			v = os.Getenv(k)
		}
		return v
	}
	home, _ := os.UserHomeDir()
	var dirs []string
	parts := func(prefix string, names []string) {
		if prefix != "" {
			for _, n := range names {
				dirs = append(dirs, filepath.Join(prefix, n))
			}
		}
	}
	addHomeRel := func(rel string) {
		if home != "" {
			dirs = append(dirs, filepath.Join(home, rel))
		}
	}
	pathVar := env("PATH")
	dirs = append(dirs, filepath.SplitList(pathVar)...)
	// Go.
	goroot := env("GOROOT")
	if goroot == "" {
		if p, err := lookPathIn("go", pathVar); err == nil {
			if real, err := filepath.EvalSymlinks(p); err == nil {
				goroot = filepath.Dir(filepath.Dir(real))
			}
		}
	}
	parts(goroot, goRootParts)
	gopath := env("GOPATH")
	if gopath == "" && home != "" {
		gopath = filepath.Join(home, "go")
	}
	for _, gp := range filepath.SplitList(gopath) {
		dirs = append(dirs, filepath.Join(gp, "pkg", "mod"), filepath.Join(gp, "bin"))
	}
	dirs = append(dirs, env("GOMODCACHE"))
	if v := env("GOCACHE"); v != "" {
		dirs = append(dirs, v)
	} else if c, err := os.UserCacheDir(); err == nil {
		dirs = append(dirs, filepath.Join(c, "go-build"))
	}
	// Rust.
	if v := env("CARGO_HOME"); v != "" {
		parts(v, []string{"registry", "git", "bin"})
	} else {
		addHomeRel(".cargo/registry")
		addHomeRel(".cargo/git")
		addHomeRel(".cargo/bin")
	}
	rustup := env("RUSTUP_HOME")
	if rustup == "" && home != "" {
		rustup = filepath.Join(home, ".rustup")
	}
	parts(rustup, rustupParts)
	// Node: the prefix of the node on PATH, and NODE_PATH.
	if p, err := lookPathIn("node", pathVar); err == nil {
		if real, err := filepath.EvalSymlinks(p); err == nil {
			parts(filepath.Dir(filepath.Dir(real)), nodeParts)
		}
	}
	dirs = append(dirs, filepath.SplitList(env("NODE_PATH"))...)
	// Python.
	parts(env("VIRTUAL_ENV"), pythonParts)
	parts(env("CONDA_PREFIX"), pythonParts)
	pyenv := env("PYENV_ROOT")
	if pyenv == "" && home != "" {
		pyenv = filepath.Join(home, ".pyenv")
	}
	if pyenv != "" {
		parts(pyenv, pyenvParts)
		versions, _ := filepath.Glob(filepath.Join(pyenv, "versions", "*"))
		for _, v := range versions {
			parts(v, pythonParts)
		}
	}
	if home != "" {
		if m, err := filepath.Glob(filepath.Join(home, ".local/lib/python3*")); err == nil {
			dirs = append(dirs, m...)
		}
	}
	return keepToolchainDirs(dirs)
}

// keepToolchainDirs cleans dirs and drops the relative ones, /, every
// home and every home's direct child but one named bin (~/bin on PATH):
// such a directory is not a toolchain's but a home's.
func keepToolchainDirs(dirs []string) []string {
	homes := map[string]bool{}
	for _, h := range homeDirs() {
		homes[h] = true
	}
	var out []string
	for _, d := range dirs {
		if !filepath.IsAbs(d) {
			continue
		}
		d = filepath.Clean(d)
		real := d
		if r, err := filepath.EvalSymlinks(d); err == nil {
			real = r
		}
		if homes[d] || homes[real] || d == "/" || real == "/" || d == "/home" || real == "/home" {
			continue
		}
		if (homes[filepath.Dir(d)] || homes[filepath.Dir(real)]) && filepath.Base(d) != "bin" {
			continue
		}
		out = append(out, d)
	}
	return out
}

// toolchainSecretsCache is a cache's last toolchainSecrets result, reused while
// the directories it looked in are the same and none of them changed (a
// file created, removed or renamed there changes its time): a credential
// file made since is masked in the very next run.
type toolchainSecretsCacheT struct {
	sync.Mutex
	dirs     []string
	stamps   map[string]int64
	reusable bool // no stamp too recent to trust
	out      []string
}

// toolchainSecrets lists the credential files (toolchainCredentials)
// that exist at the top of the toolchain directories dirs or in their etc
// directories, and the targets of those that are symlinks: no view holds
// them. About 40 stats per call while nothing changed.
func (c *Cache) toolchainSecrets(dirs []string) []string {
	t := &c.toolchains
	t.Lock()
	defer t.Unlock()
	return t.lookLocked(dirs)
}

func (c *toolchainSecretsCacheT) lookLocked(dirs []string) []string {
	if c.reusable && slices.Equal(c.dirs, dirs) && stampsHold(c.stamps) {
		return c.out
	}
	var paths []string
	stamps := map[string]int64{}
	for _, d := range dirs {
		for _, base := range []string{d, filepath.Join(d, "etc")} {
			if _, ok := stamps[base]; ok {
				continue
			}
			stamps[base] = mtime(base)
			for _, n := range toolchainCredentials {
				paths = append(paths, filepath.Join(base, n))
			}
		}
	}
	out, reusable := expandStamped(paths, stamps) // masks.go
	if out == nil {
		out = []string{}
	}
	c.dirs, c.stamps, c.out, c.reusable = slices.Clone(dirs), stamps, out, reusable
	return out
}
