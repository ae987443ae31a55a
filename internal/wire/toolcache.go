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
func toolchainEnv(getenv func(string) string) []string {
	var env []string
	add := func(key, dir string) {
		if dir == "" {
			return
		}
		if st, err := os.Stat(dir); err != nil || !st.IsDir() {
			return
		}
		env = append(env, key+"="+dir)
	}
	add("GOCACHE", goCache(getenv))
	add("GOMODCACHE", goModCache(getenv))
	if getenv("GOTOOLCHAIN") == "" {
		env = append(env, "GOTOOLCHAIN=local")
	}
	return env
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
