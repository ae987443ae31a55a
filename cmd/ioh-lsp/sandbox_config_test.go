package main

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/ioh-lsp/ioh-lsp/internal/sandbox/sandboxtest"
)

// userConfig gives this test its own XDG_CONFIG_HOME with the user config
// holding text ("" for none) and HOME home ("": a new one), and returns
// the config file's path.
func userConfig(t *testing.T, home, text string) string {
	t.Helper()
	if home == "" {
		home = t.TempDir()
	}
	t.Setenv("HOME", home)
	cfgHome := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", cfgHome)
	path := filepath.Join(cfgHome, "ioh", "config.yaml")
	if text != "" {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return path
}

// TestSandboxRunUserConfig: `sandbox run` applies the user config's
// sandbox key as agent runs do: a masked path is hidden (control: readable
// without the config), its wall limit binds unless --timeout is given, and
// a bad value is a usage error at its file:line:col.
func TestSandboxRunUserConfig(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("masks are enforced by the linux and landlock tiers")
	}
	// HOME is the run's writable root (the working directory), so the
	// secret is in its view unless masked (homes are outside the read
	// view), and not under /tmp, which a contained command sees as its
	// private one.
	home := sandboxtest.Dir(t)
	t.Chdir(home)
	secret := filepath.Join(home, ".mysecretdir", "s")
	if err := os.MkdirAll(filepath.Dir(secret), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(secret, []byte("topsecret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := "sandbox:\n  masked: [~/.mysecretdir]\n  limits: {wall: 1s}\n"
	t.Run("masked path hidden", func(t *testing.T) {
		userConfig(t, home, cfg)
		code, out, errs := runCLI(t, "sandbox", "run", "--", "cat", secret)
		if code == 0 || strings.Contains(out, "topsecret") {
			t.Errorf("masked secret read: exit %d stdout %q stderr %q", code, out, errs)
		}
	})
	t.Run("control: readable without the config", func(t *testing.T) {
		userConfig(t, home, "")
		code, out, errs := runCLI(t, "sandbox", "run", "--", "cat", secret)
		if code != 0 || out != "topsecret\n" {
			t.Errorf("exit %d stdout %q stderr %q", code, out, errs)
		}
	})
	t.Run("wall limit from the config", func(t *testing.T) {
		userConfig(t, home, cfg)
		code, _, errs := runCLI(t, "sandbox", "run", "--", "sleep", "30")
		if code != 137 || !strings.Contains(errs, "wall cap hit") {
			t.Errorf("exit %d, want 137 from the config's 1s wall; stderr:\n%s", code, errs)
		}
	})
	t.Run("a flag overrides the config's limit", func(t *testing.T) {
		userConfig(t, home, cfg)
		code, _, errs := runCLI(t, "sandbox", "run", "--timeout", "1m", "--", "sleep", "1.5")
		if code != 0 {
			t.Errorf("exit %d, want 0 under --timeout 1m; stderr:\n%s", code, errs)
		}
	})
	t.Run("bad require at its position", func(t *testing.T) {
		path := userConfig(t, home, "sandbox:\n  require: bogus\n")
		code, _, errs := runCLI(t, "sandbox", "run", "--", "true")
		if want := path + ":2:12: sandbox.require"; code != 2 || !strings.Contains(errs, want) {
			t.Errorf("exit %d, want 2 naming %q; stderr:\n%s", code, want, errs)
		}
	})
}

// TestSandboxRunInMaskedDir: `cd ~/.ssh && sandbox run -- cat id_rsa` is a
// setup error (125) saying the directory stays masked though it is the
// writable root; the key is not printed.
func TestSandboxRunInMaskedDir(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the linux tier's check")
	}
	home := sandboxtest.Dir(t)
	userConfig(t, home, "")
	ssh := filepath.Join(home, ".ssh")
	if err := os.Mkdir(ssh, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ssh, "id_rsa"), []byte("PRIVATE KEY\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Chdir(ssh)
	code, out, errs := runCLI(t, "sandbox", "run", "--", "cat", "id_rsa")
	if code != 125 || strings.Contains(out, "PRIVATE") || !strings.Contains(errs, "working directory "+ssh+" is a masked path, which stays hidden inside the sandbox even as a writable root") {
		t.Errorf("exit %d stdout %q stderr %q; want 125 saying the writable root stays masked", code, out, errs)
	}
}
