package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestSandboxRunGoCache: `ioh-lsp sandbox run -- go test ./...` with
// GOCACHE exported gets the Go cache layer agent runs get: the build
// cache, read-only in the sandbox, is read in place and its writes go to
// a private layer, so the test runs instead of failing "[setup failed] …
// read-only file system"; the host cache is not written. Without the
// layer the same command fails "failed to initialize build cache at …:
// mkdir …/00: read-only file system".
func TestSandboxRunGoCache(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on PATH")
	}
	bin := buildBinary(t)
	// Outside /tmp, which the sandbox replaces with a private one: the
	// cache must be one it shows read-only, as a user's ~/.cache is.
	cache, err := os.MkdirTemp(".", ".gocache-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(cache) })
	cache, _ = filepath.Abs(cache)
	mod := t.TempDir()
	old := time.Now().Add(-time.Hour) // older than 2 s: the module index looks it up, then stores it
	for name, body := range map[string]string{"go.mod": "module m\n\ngo 1.21\n", "m_test.go": "package m\n\nimport \"testing\"\n\nfunc TestOK(t *testing.T) {}\n"} {
		p := filepath.Join(mod, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		os.Chtimes(p, old, old)
	}
	env := append(os.Environ(), "GOCACHE="+cache, "GOFLAGS=", "GOTOOLCHAIN=local")
	run := func(args ...string) (int, string) {
		cmd := exec.Command(bin, append([]string{"sandbox", "run", "--"}, args...)...)
		cmd.Dir, cmd.Env = mod, env
		out, err := cmd.CombinedOutput()
		if ee, ok := err.(*exec.ExitError); ok {
			return ee.ExitCode(), string(out)
		} else if err != nil {
			t.Fatal(err)
		}
		return 0, string(out)
	}
	code, out := run(goBin, "test", "./...")
	if code != 0 || !strings.Contains(out, "ok") {
		t.Fatalf("go test in the sandbox with GOCACHE exported: exit %d\n%s", code, out)
	}
	if ents, _ := os.ReadDir(cache); len(ents) != 0 {
		t.Errorf("the host cache was written: %d entries", len(ents))
	}
}
