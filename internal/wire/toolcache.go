package wire

import (
	"os"
	"path/filepath"
)

// toolchainEnv points sandboxed commands at the host's Go build and module
// caches. Inside the sandbox the host root is bound read-only, so these
// caches are readable but not writable: hits are reused (a verification
// `go test` does not rebuild the standard library every run), misses compile
// in the command's private temporary directory, and sandboxed code cannot
// poison a cache the user's own builds trust. GOTOOLCHAIN=local keeps the go
// command from trying to download another toolchain. A cache that does not
// exist is left out; variables the user configured win.
//
// With the read-only build cache goes noModuleIndex: the go command's
// module index is the one cache write whose failure is fatal to a build or
// test (see its comment).
func toolchainEnv(getenv func(string) string) []string {
	var env []string
	add := func(key, dir string) bool {
		if dir == "" {
			return false
		}
		if st, err := os.Stat(dir); err != nil || !st.IsDir() {
			return false
		}
		env = append(env, key+"="+dir)
		return true
	}
	if add("GOCACHE", goCache(getenv)) {
		env = append(env, noModuleIndex)
	}
	add("GOMODCACHE", goModCache(getenv))
	if getenv("GOTOOLCHAIN") == "" {
		env = append(env, "GOTOOLCHAIN=local")
	}
	return env
}

// noModuleIndex turns off the go command's module index
// (cmd/go/internal/modindex), which keeps a parsed summary of each package
// directory in the build cache. When loading a package it looks the summary
// up and, on a miss, writes it, and unlike every other cache write (compiled
// packages, test results, vet and cgo outputs, which are best effort) a
// failed write fails the load: `go test` says "[setup failed]" with "open
// $GOCACHE/xx/…-d: read-only file system", `go build` and `go vet` fail the
// same way. It misses for every package directory (the workspace, GOROOT,
// the module cache) whose files are all more than 2 seconds old and whose
// path, file names, sizes and mtimes (and Go version) the host's own builds
// have not indexed yet, and for a module-cache module this Go version has
// not indexed, which is any real project the user has edited since their
// last build; a directory with a file younger than 2 seconds is never
// indexed, which is why a freshly written test module passes. Without the
// index the go command reads the package directories themselves (as it
// does for a directory it cannot index); the compiled packages and test
// results in the cache are still reused. The cost is package loading, about
// 0.3 s of CPU for a module with 600 dependencies (`go list -deps` of this
// repository: 0.59 s user+sys with the index, 0.86 s without).
const noModuleIndex = "GODEBUG=goindex=0"

// toolchainScratch lists the host caches that sandboxed commands may write
// into a private layer (sandbox.Spec.Scratch: an overlay in the linux tier;
// in the landlock and floor tiers a private GOCACHE served by the sandbox's
// gocache stage as GOCACHEPROG, which reads host hits in place): the build
// cache, when it exists. Every cache write then succeeds and is
// discarded with the run, the host cache is never written, and hits are
// still read from it. It is what makes `go list -export` work there, which
// go/packages tools (staticcheck, golangci-lint) run for every package:
// unlike `go build`, it fails when it cannot store a package it had to
// compile, and staticcheck then reports "matched no packages" and exits 0,
// a check that passes without checking anything. A go older than 1.24
// ignores GOCACHEPROG and starts from the empty private cache there (correct,
// slower); noModuleIndex keeps go build, vet and test working either way.
func toolchainScratch(getenv func(string) string) []string {
	dir := goCache(getenv)
	if dir == "" {
		return nil
	}
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return nil
	}
	return []string{dir}
}

// goCache is the go command's build cache: $GOCACHE, else
// os.UserCacheDir()/go-build ("off" disables it).
func goCache(getenv func(string) string) string {
	if v := getenv("GOCACHE"); v != "" {
		if v == "off" {
			return ""
		}
		return v
	}
	dir, err := userCacheDir(getenv)
	if err != nil {
		return ""
	}
	return filepath.Join(dir, "go-build")
}

// goModCache is $GOMODCACHE, else the first GOPATH entry's pkg/mod, else
// $HOME/go/pkg/mod.
func goModCache(getenv func(string) string) string {
	if v := getenv("GOMODCACHE"); v != "" {
		return v
	}
	if gp := filepath.SplitList(getenv("GOPATH")); len(gp) > 0 && gp[0] != "" {
		return filepath.Join(gp[0], "pkg", "mod")
	}
	if home := getenv("HOME"); home != "" {
		return filepath.Join(home, "go", "pkg", "mod")
	}
	return ""
}

// userCacheDir mirrors os.UserCacheDir on Unix with an injectable getenv.
func userCacheDir(getenv func(string) string) (string, error) {
	if v := getenv("XDG_CACHE_HOME"); v != "" && filepath.IsAbs(v) {
		return v, nil
	}
	if home := getenv("HOME"); home != "" {
		return filepath.Join(home, ".cache"), nil
	}
	return os.UserCacheDir()
}

// Toolchain is the Go cache setup every sandboxed command of a run gets
// (toolchainEnv's environment, toolchainScratch's layer over the build
// cache), for commands the CLI sandboxes itself (`ioh-lsp sandbox run`).
func Toolchain(getenv func(string) string) (env, scratch []string) {
	return toolchainEnv(getenv), toolchainScratch(getenv)
}
