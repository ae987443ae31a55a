package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// envAllow lists the parent variables a contained command inherits; names
// ending in '*' are prefixes. HOME is never inherited: each run gets a
// private one.
var envAllow = []string{
	"PATH", "LANG", "LANGUAGE", "LC_*", "TERM", "TZ", "USER", "LOGNAME", "SHELL",
	"GOPATH", "GOCACHE", "GOMODCACHE", "GOFLAGS", "GOPROXY", "GONOSUMDB",
	"GONOPROXY", "GOPRIVATE", "GOSUMDB", "GOTOOLCHAIN", "GOROOT", "GOENV",
	"GOTELEMETRY", "CGO_ENABLED", "CC", "CXX",
	"CARGO_HOME", "RUSTUP_HOME", "NODE_PATH", "NPM_CONFIG_CACHE",
	"PYTHONPATH", "VIRTUAL_ENV", "JAVA_HOME", "SSL_CERT_FILE", "SSL_CERT_DIR",
	"XDG_CACHE_HOME",
	// The race runtime's options: a race-built test a check runs keeps the
	// user's (for example atexit_sleep_ms=0); no other program reads it.
	"GORACE",
	// Windows needs these to start most programs.
	"SYSTEMROOT", "WINDIR", "COMSPEC", "PATHEXT", "PROGRAMFILES", "PROGRAMDATA", "NUMBER_OF_PROCESSORS",
}

// secretName reports whether an environment variable name looks like a
// credential: such variables never reach a contained command.
func secretName(name string) bool {
	n := strings.ToUpper(name)
	for _, s := range []string{"SECRET", "PASSWORD", "PASSWD", "CREDENTIAL", "PRIVATE_KEY"} {
		if strings.Contains(n, s) {
			return true
		}
	}
	for _, s := range []string{"_KEY", "_TOKEN", "APIKEY", "_PAT", "_AUTH"} {
		if strings.HasSuffix(n, s) {
			return true
		}
	}
	return n == "TOKEN" || n == "GOAUTH" || n == "NETRC" || strings.HasPrefix(n, "AWS_") ||
		strings.HasPrefix(n, "SSH_AUTH")
}

func allowed(name string) bool {
	if secretName(name) {
		return false
	}
	for _, a := range envAllow {
		if p, ok := strings.CutSuffix(a, "*"); ok {
			if strings.HasPrefix(name, p) {
				return true
			}
		} else if strings.EqualFold(name, a) { // Windows names are case-insensitive
			return true
		}
	}
	return false
}

// checkEnv validates explicit KEY=VALUE additions.
func checkEnv(env []string) ([]string, error) {
	for _, kv := range env {
		k, _, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("%w: environment entry %q is not KEY=VALUE", ErrBadSpec, kv)
		}
		if secretName(k) {
			return nil, fmt.Errorf("%w: %s", ErrSecretEnv, k)
		}
	}
	return env, nil
}

// BuildEnv returns the environment a contained command gets: the
// allow-listed variables of parent (KEY=VALUE entries, normally
// os.Environ()), HOME set to home, then extra. Later entries win.
func BuildEnv(parent []string, home string, extra []string) []string {
	seen := map[string]int{}
	var out []string
	add := func(kv string) {
		k, _, _ := strings.Cut(kv, "=")
		if i, ok := seen[k]; ok {
			out[i] = kv
			return
		}
		seen[k] = len(out)
		out = append(out, kv)
	}
	for _, kv := range parent {
		k, _, ok := strings.Cut(kv, "=")
		if ok && allowed(k) {
			add(kv)
		}
	}
	if _, ok := seen["PATH"]; !ok {
		add("PATH=/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin")
	}
	add("HOME=" + home)
	for _, kv := range extra {
		if k, _, _ := strings.Cut(kv, "="); !secretName(k) {
			add(kv)
		}
	}
	return out
}

// parentEnv is the process environment; a variable for tests.
var parentEnv = os.Environ

// stageEnv is the environment of a re-executed stage process: nothing of
// the parent's but GORACE, which only a race-built binary reads (a test
// binary acting as the stage; without it every stage sleeps a second at
// exit), then extra.
func stageEnv(extra ...string) []string {
	env := []string{}
	if v, ok := os.LookupEnv("GORACE"); ok {
		env = append(env, "GORACE="+v)
	}
	return append(env, extra...)
}

// hostHome is the caller's HOME as a clean absolute path, or "".
func hostHome() string {
	h := os.Getenv("HOME")
	if !filepath.IsAbs(h) || filepath.Clean(h) != h {
		return ""
	}
	return h
}
